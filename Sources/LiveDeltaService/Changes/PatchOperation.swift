import ByteJSON

/// One RFC 6902 operation: `add`, `remove`, `replace`, `move`, `copy` or `test`, with its
/// paths parsed (RFC 6901) and its value left where it lies in the body.
struct PatchOperation {
    enum Kind: String, CaseIterable {
        case add, remove, replace, move, copy, test
    }

    let kind: Kind
    let pointer: JSONPointer
    let path: [[UInt8]]
    let from: [[UInt8]]?
    let value: Range<Int>?

    init(_ scanner: inout JSONScanner, at pointer: JSONPointer) throws(APIError) {
        self.pointer = pointer
        let members = try OperationMembers(&scanner, at: pointer, what: "a patch operation")
        guard let op = members["op"].flatMap(scanner.string), let kind = Kind(rawValue: op) else {
            throw APIError(
                .invalidOperation, message: "op must be one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))",
                pointer: pointer.appending("op").description)
        }
        self.kind = kind
        func member(_ name: String) throws(APIError) -> [[UInt8]] {
            guard let text = members[name].flatMap(scanner.string) else {
                throw APIError(.invalidOperation, message: "\(op) needs \"\(name)\", a JSON Pointer", pointer: pointer.appending(name).description)
            }
            guard let tokens = Self.tokens(text) else {
                throw APIError(
                    .invalidOperation, message: "\(text) is not a JSON Pointer (RFC 6901): it starts with / and escapes only ~0 and ~1",
                    pointer: pointer.appending(name).description)
            }
            return tokens
        }
        path = try member("path")
        from = kind == .move || kind == .copy ? try member("from") : nil
        value = members["value"]?.range
        if value == nil && (kind == .add || kind == .replace || kind == .test) {
            throw APIError(.invalidOperation, message: "\(op) needs a \"value\"", pointer: pointer.description)
        }
    }

    /// Whether the operation takes or gives the whole document: its path or `from` is the root
    /// (a move from the root to itself does nothing).
    var reachesRoot: Bool { (path.isEmpty || from?.isEmpty == true) && !(kind == .move && from == path) }

    /// A JSON Pointer's reference tokens, unescaped; nil where it is not one.
    static func tokens(_ text: String) -> [[UInt8]]? {
        guard !text.isEmpty else { return [] }
        // By byte: hasPrefix compares Characters, and "/" before a combining mark is not one.
        guard text.utf8.first == UInt8(ascii: "/") else { return nil }
        var tokens: [[UInt8]] = []
        for part in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst() {
            var token: [UInt8] = []
            var iterator = part.makeIterator()
            while let byte = iterator.next() {
                guard byte == UInt8(ascii: "~") else {
                    token.append(byte)
                    continue
                }
                switch iterator.next() {
                case UInt8(ascii: "0"): token.append(UInt8(ascii: "~"))
                case UInt8(ascii: "1"): token.append(UInt8(ascii: "/"))
                default: return nil
                }
            }
            tokens.append(token)
        }
        return tokens
    }
}
