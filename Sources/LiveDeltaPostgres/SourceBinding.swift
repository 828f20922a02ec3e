import ByteJSON
import LiveDeltaService

/// A session a source feeds: what evaluates it again, and what it was last evaluated to.
struct SourceBinding: Sendable {
    let source: SourceDefinition
    let parameters: [String?]
    /// As the leases keep it (`record`), told apart from a binding made since by its nonce.
    let record: [UInt8]
    /// The version this replica last read or committed; nil for a binding taken over from
    /// another replica, until the session is read.
    var version: UInt64?
    /// Of the rows `version` holds (`PostgresSources.evaluate`); empty where not known.
    var digest: [UInt64]
    /// The status last reported for it where that was a problem (`PostgresSources.report`);
    /// for a binding taken over, not known, so the first evaluation reports.
    var problem: [UInt8]?

    /// What is evaluated for it: sessions with the same are evaluated once.
    struct Query: Hashable {
        let source: String
        let parameters: [String?]
    }

    var query: Query { Query(source: source.name, parameters: parameters) }

    init(source: SourceDefinition, parameters: [String?], version: UInt64?, digest: [UInt64]) {
        self.source = source
        self.parameters = parameters
        self.version = version
        self.digest = digest
        var generator = SystemRandomNumberGenerator()
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("binding")
        writer.string(String(generator.next(), radix: 36))
        writer.raw(",")
        writer.key("source")
        writer.string(source.name)
        writer.raw(",")
        writer.key("params")
        writer.raw("[")
        for (index, parameter) in parameters.enumerated() {
            if index > 0 { writer.raw(",") }
            if let parameter { writer.string(parameter) } else { writer.raw("null") }
        }
        writer.raw("]}")
        record = writer.bytes
    }

    /// A binding from its record, as another replica made it; nil where the record names no
    /// source of `definitions` (a replica with another sources file) or does not read.
    init?(record: [UInt8], _ definitions: [String: SourceDefinition]) {
        guard let value = try? record.withUnsafeBufferPointer({ bytes throws(JSONError) in try JSONValue(parsing: bytes) }),
            let name = value["source"]?.stringValue, let source = definitions[name], case .array(let values)? = value["params"],
            values.count == source.parameters.count
        else { return nil }
        var parameters: [String?] = []
        for value in values {
            switch value {
            case .null: parameters.append(nil)
            case .string: parameters.append(value.stringValue)
            default: return nil
            }
        }
        self.source = source
        self.parameters = parameters
        self.record = record
        version = nil
        digest = []
        problem = []
    }

    /// The source a record names, without reading the rest.
    static func source(of record: [UInt8]) -> String? {
        (try? record.withUnsafeBufferPointer({ bytes throws(JSONError) in try JSONValue(parsing: bytes) }))?["source"]?.stringValue
    }
}

extension SourceDefinition {
    /// What its sessions' items are read with: the key column is the id.
    var options: DiffOptions {
        var options = DiffOptions()
        options.idKey = key
        return options
    }
}
