import ByteJSON

/// A query's rows as a JSON array of objects, one member a column, typed by the column's
/// PostgreSQL type: numbers as numbers, booleans as booleans, json and jsonb as they are, NULL
/// as null, everything else (text, dates, uuids, arrays…) as the string PostgreSQL writes.
enum RowJSON {
    /// Why rows make no list of items: each needs a key, and no two the same.
    struct KeyError: Error, CustomStringConvertible {
        let description: String
    }

    /// The rows as items (`[…]`), or, where `section` names a column, as sections of the rows
    /// that share its value, one after another (`{"sections": [{"id": value, "items": […]}]}`).
    static func collection(_ rows: PostgresRows, key: String, section: String?) throws(KeyError) -> [UInt8] {
        let columns = (0..<rows.columns).map { (name: rows.name($0), kind: Kind(oid: rows.type($0))) }
        func column(_ name: String) throws(KeyError) -> Int {
            guard let found = columns.firstIndex(where: { $0.name == name }) else {
                throw KeyError(description: "the query has no column \(name) (its columns: \(columns.map(\.name).joined(separator: ", ")))")
            }
            return found
        }
        let keyColumn = try column(key)
        try checkKeys(rows, keyColumn, key)
        var writer = JSONWriter(capacity: 64 + rows.count * 64)
        guard let section else {
            writer.raw("[")
            for row in 0..<rows.count {
                if row > 0 { writer.raw(",") }
                object(rows, row, columns, into: &writer)
            }
            writer.raw("]")
            return writer.bytes
        }
        let sectionColumn = try column(section)
        var started: [[UInt8]: Int] = [:]
        var current: [UInt8]?
        writer.raw("{\"sections\":[")
        for row in 0..<rows.count {
            guard let text = rows.value(row, sectionColumn) else { throw KeyError(description: "row \(row + 1) has a NULL \(section)") }
            if current.map({ !$0.elementsEqual(text) }) ?? true {
                if let earlier = started.updateValue(row, forKey: Array(text)) {
                    throw KeyError(
                        description:
                            "rows \(earlier + 1) and \(row + 1) have one \(section), \(String(decoding: text, as: UTF8.self)), with other sections between: ORDER BY \(section) first"
                    )
                }
                if current != nil { writer.raw("]},") }
                current = Array(text)
                writer.raw("{\"id\":")
                value(text, columns[sectionColumn].kind, into: &writer)
                writer.raw(",\"items\":[")
            } else {
                writer.raw(",")
            }
            object(rows, row, columns, into: &writer)
        }
        writer.raw(current == nil ? "]}" : "]}]}")
        return writer.bytes
    }

    /// Each row has a key, and no two the same. By text: within one column, PostgreSQL writes
    /// one value one way (numeric's trailing zeros aside, which the session's own check then
    /// refuses).
    private static func checkKeys(_ rows: PostgresRows, _ keyColumn: Int, _ key: String) throws(KeyError) {
        var keys: [[UInt8]: Int] = [:]
        keys.reserveCapacity(rows.count)
        for row in 0..<rows.count {
            guard let text = rows.value(row, keyColumn) else { throw KeyError(description: "row \(row + 1) has a NULL \(key)") }
            if let earlier = keys.updateValue(row, forKey: Array(text)) {
                throw KeyError(description: "rows \(earlier + 1) and \(row + 1) have one \(key), \(String(decoding: text, as: UTF8.self))")
            }
        }
    }

    private static func object(_ rows: PostgresRows, _ row: Int, _ columns: [(name: String, kind: Kind)], into writer: inout JSONWriter) {
        writer.raw("{")
        for (column, (name, kind)) in columns.enumerated() {
            if column > 0 { writer.raw(",") }
            writer.string(name)
            writer.raw(":")
            value(rows.value(row, column), kind, into: &writer)
        }
        writer.raw("}")
    }

    private enum Kind {
        case bool, integer, decimal, json, text

        /// By `pg_type` oid: the built-in types, whose oids never change.
        init(oid: UInt32) {
            switch oid {
            case 16: self = .bool
            case 20, 21, 23, 26: self = .integer  // int8, int2, int4, oid
            case 700, 701, 1700: self = .decimal  // float4, float8, numeric
            case 114, 3802: self = .json  // json, jsonb
            default: self = .text
            }
        }
    }

    private static func value(_ text: UnsafeBufferPointer<UInt8>?, _ kind: Kind, into writer: inout JSONWriter) {
        guard let text else {
            writer.raw("null")
            return
        }
        switch kind {
        case .bool: writer.bool(text.first == UInt8(ascii: "t"))
        case .integer, .json: writer.raw(text)
        case .decimal:
            // NaN and ±Infinity have no JSON number: they go as the strings PostgreSQL writes.
            if text.contains(where: { $0 == UInt8(ascii: "N") || $0 == UInt8(ascii: "I") }) {
                writer.string(generalizedUTF8: text)
            } else {
                writer.raw(text)
            }
        case .text: writer.string(generalizedUTF8: text)
        }
    }
}
