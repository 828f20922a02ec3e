import ByteJSON

/// The SQL an operator installs so that the sources hear of their tables' changes: for each
/// table a source's query reads (as PostgreSQL plans it), a statement-level trigger that
/// notifies the channels of every source reading it. One notification per statement, sent when
/// its transaction commits, whatever the number of rows.
package enum SourceTriggers {
    package static func sql(file: [UInt8], conninfo: String) throws(SourceStartError) -> String {
        let definitions: [SourceDefinition]
        do {
            definitions = try SourceDefinition.read(file)
        } catch {
            throw SourceStartError(description: error.description)
        }
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(conninfo)
            // A plan that does not depend on the parameters' values, which EXPLAIN gets as NULLs.
            try connection.execute("SET plan_cache_mode = force_generic_plan")
        } catch {
            throw SourceStartError(description: "cannot connect to PostgreSQL: \(error)")
        }
        // By table (schema and name): the channels to notify and the sources that read it.
        var tables: [[String]: (channels: Set<String>, sources: Set<String>)] = [:]
        for definition in definitions {
            do {
                let count = try connection.prepare(definition.statement, definition.query)
                let nulls = Array(repeating: "NULL", count: count).joined(separator: ", ")
                let plan = try connection.execute(
                    rows: "EXPLAIN (VERBOSE, FORMAT JSON) EXECUTE \(try connection.identifier(definition.statement))"
                        + (count > 0 ? "(\(nulls))" : ""))
                defer { plan.close() }
                guard plan.count > 0, let text = plan.value(0, 0) else { continue }
                for table in relations(in: try JSONValue(parsing: text)) {
                    tables[table, default: ([], [])].channels.formUnion(definition.channels)
                    tables[table, default: ([], [])].sources.insert(definition.name)
                }
            } catch {
                throw SourceStartError(description: "source \(definition.name): its query cannot be planned: \(error)")
            }
        }
        var sql = "-- Triggers for the sources' tables: each statement that changes one notifies the channels of the sources reading it.\n"
        for (table, reading) in tables.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            do {
                sql += try trigger(table, channels: reading.channels.sorted(), sources: reading.sources.sorted(), on: connection)
            } catch {
                throw SourceStartError(description: "table \(table.joined(separator: ".")): \(error)")
            }
        }
        return sql
    }

    private static func trigger(_ table: [String], channels: [String], sources: [String], on connection: PostgresConnection) throws(PostgresError)
        -> String
    {
        let qualified = try table.map { name throws(PostgresError) in try connection.identifier(name) }.joined(separator: ".")
        let function = try connection.identifier("livedelta_notify_" + table.joined(separator: "_"))
        let notifications = channels.map {
            "  PERFORM pg_notify('\($0.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''"))', '');"
        }.joined(separator: "\n")
        return """

            -- \(qualified), read by \(sources.joined(separator: ", "))
            CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
            \(notifications)
              RETURN NULL;
            END $$;
            CREATE OR REPLACE TRIGGER livedelta_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(qualified)
              FOR EACH STATEMENT EXECUTE FUNCTION \(function)();

            """
    }

    /// The tables a plan reads, as schema and name.
    private static func relations(in plan: JSONValue) -> Set<[String]> {
        var found: Set<[String]> = []
        func walk(_ value: JSONValue) {
            switch value {
            case .object(let members):
                if let name = members[Array("Relation Name".utf8)]?.stringValue {
                    found.insert([members[Array("Schema".utf8)]?.stringValue ?? "public", name])
                }
                for member in members.values { walk(member) }
            case .array(let values): for value in values { walk(value) }
            default: break
            }
        }
        walk(plan)
        return found
    }
}
