import ByteJSON

/// A source the operator declared (`--sources FILE`): a query whose ordered rows a session
/// holds, one item a row. Requests name a source and give its parameters; they never send SQL.
struct SourceDefinition: Sendable {
    let name: String
    /// `SELECT … ORDER BY …`, with `$1`, `$2`… for `parameters`.
    let query: String
    /// The column whose value is each item's id.
    let key: String
    /// The column whose value is each row's section: rows that share it, one after another in
    /// the query's order, are a section with that id. Nil: a flat list.
    let section: String?
    /// The channels to `LISTEN` on: a notification on any says the result may have changed.
    let channels: [String]
    /// Notifications within this time of the first become one evaluation.
    let debounce: Duration
    /// Evaluated this often even without a notification, as a safety net; nil: never.
    let refresh: Duration?
    /// `$1`, `$2`… in order.
    let parameters: [SourceParameter]

    /// The statement's name on a connection.
    var statement: String { "livedelta_source_\(name)" }
}

/// Where a query parameter's value comes from.
enum SourceParameter: Sendable, Equatable {
    /// The request's `params` member `name`, whole-matched by `pattern` (a Swift regex).
    case request(name: String, pattern: String)
    /// The tenant claim of the request's token: tenant A's session holds tenant A's rows only.
    case tenant
}

/// A sources file that cannot be used: what is wrong, and where.
struct SourceFileError: Error, CustomStringConvertible {
    let description: String
}

extension SourceDefinition {
    /// The sources a file declares:
    /// `{"sources": {"NAME": {"query", "key", "listen", "debounceMilliseconds", "refreshSeconds", "parameters"}}}`.
    static func read(_ text: [UInt8]) throws(SourceFileError) -> [SourceDefinition] {
        let document: JSONValue
        do {
            document = try text.withUnsafeBufferPointer { bytes throws(JSONError) in try JSONValue(parsing: bytes) }
        } catch {
            throw SourceFileError(description: "the sources file is not JSON: \(error)")
        }
        guard case .object(let top) = document, case .object(let sources)? = top[Array("sources".utf8)], top.count == 1 else {
            throw SourceFileError(description: "the sources file must be {\"sources\": {\"name\": {...}, ...}}")
        }
        var definitions: [SourceDefinition] = []
        for (nameBytes, value) in sources.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let name = String(decoding: nameBytes, as: UTF8.self)
            guard !name.isEmpty, name.utf8.count <= 40,
                name.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || Self.isAlphanumeric($0) })
            else {
                throw SourceFileError(description: "source name \"\(name)\": use 1 to 40 letters, digits, - or _")
            }
            definitions.append(try SourceDefinition(name: name, value))
        }
        return definitions
    }

    private init(name: String, _ value: JSONValue) throws(SourceFileError) {
        func fail(_ message: String) -> SourceFileError { SourceFileError(description: "source \(name): \(message)") }
        guard case .object(let members) = value else { throw fail("must be an object") }
        let known = ["query", "key", "section", "listen", "debounceMilliseconds", "refreshSeconds", "parameters"]
        for member in members.keys where !known.contains(String(decoding: member, as: UTF8.self)) {
            throw fail("unknown member \"\(String(decoding: member, as: UTF8.self))\" (known: \(known.joined(separator: ", ")))")
        }
        func text(_ key: String) throws(SourceFileError) -> String {
            guard let string = members[Array(key.utf8)]?.stringValue, !string.isEmpty else { throw fail("\"\(key)\" must be a non-empty string") }
            return string
        }
        func whole(_ key: String, in range: ClosedRange<Int>, default fallback: Int) throws(SourceFileError) -> Int {
            guard let value = members[Array(key.utf8)] else { return fallback }
            guard case .number(let number) = value, let whole = number.nonNegativeInt, range.contains(whole) else {
                throw fail("\"\(key)\" must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return whole
        }
        self.name = name
        query = try text("query")
        key = try text("key")
        section = members[Array("section".utf8)] == nil ? nil : try text("section")
        guard case .array(let listen)? = members[Array("listen".utf8)], !listen.isEmpty else {
            throw fail("\"listen\" must list the channels whose notifications say its tables changed")
        }
        var channels: [String] = []
        for channel in listen {
            guard let channel = channel.stringValue, !channel.isEmpty, channel.utf8.count <= 63 else {
                throw fail("each channel in \"listen\" must be a string of 1 to 63 bytes (PostgreSQL's identifier length)")
            }
            channels.append(channel)
        }
        self.channels = channels
        debounce = .milliseconds(try whole("debounceMilliseconds", in: 0...60_000, default: 50))
        let refreshSeconds = try whole("refreshSeconds", in: 0...86_400, default: 0)
        refresh = refreshSeconds == 0 ? nil : .seconds(refreshSeconds)
        var parameters: [SourceParameter] = []
        if let value = members[Array("parameters".utf8)] {
            guard case .array(let list) = value else { throw fail("\"parameters\" must be an array, one entry for each of $1, $2…") }
            for (index, entry) in list.enumerated() {
                parameters.append(try Self.parameter(entry, fail: { fail("parameter $\(index + 1): \($0)") }))
            }
        }
        self.parameters = parameters
    }

    private static func parameter(_ entry: JSONValue, fail: (String) -> SourceFileError) throws(SourceFileError) -> SourceParameter {
        guard case .object(let members) = entry else { throw fail("must be an object") }
        if members[Array("tenant".utf8)] == .bool(true), members.count == 1 { return .tenant }
        guard let name = members[Array("name".utf8)]?.stringValue, !name.isEmpty, let pattern = members[Array("pattern".utf8)]?.stringValue,
            members.count == 2
        else {
            throw fail(
                "must be {\"tenant\": true} (the token's tenant) or {\"name\": …, \"pattern\": …} (a request parameter and the regex it must match whole)"
            )
        }
        do {
            _ = try Regex(pattern)
        } catch {
            throw fail("pattern \(pattern) is not a regex: \(error)")
        }
        return .request(name: name, pattern: pattern)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
