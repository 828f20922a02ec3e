/// A JSON value as a tree, compared by meaning: object members in any order (the last of
/// repeated names wins), numbers by value, strings by their unescaped UTF-8 bytes.
///
/// The request path reads without trees; this is for small parts (options) and for
/// confirming that two values whose hashes match are really equal.
public indirect enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(CanonicalNumber)
    case string([UInt8])
    case array([JSONValue])
    case object([[UInt8]: JSONValue])

    /// Parses one document.
    public init(parsing bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) throws(JSONError) {
        var scanner = JSONScanner(bytes, maxDepth: maxDepth)
        var checker = scanner
        _ = try checker.scanDocument()
        self = try scanner.buildValue(keeping: nil)
    }

    /// Parses one document from a string.
    public init(parsing text: String) throws(JSONError) {
        self = try Array(text.utf8).withUnsafeBufferPointer { bytes throws(JSONError) in try JSONValue(parsing: bytes) }
    }

    /// The text of a string value; nil for any other kind.
    public var stringValue: String? {
        if case .string(let bytes) = self { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    /// The member named `key` of an object; nil for a missing member or another kind.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[Array(key.utf8)] }
        return nil
    }
}

extension JSONScanner {
    /// Builds the value at the cursor as a tree. Where `keeping` is given and the value is an
    /// object, only the top-level members it accepts are built; the others are skipped.
    /// The recursion goes no deeper than the scanner's `maxDepth`: entering a container past it
    /// throws `tooDeep`, validated text or not.
    package mutating func buildValue(keeping: ((ScannedString) -> Bool)?) throws(JSONError) -> JSONValue {
        guard let byte = peek() else { throw JSONError(.unexpectedEnd, at: position) }
        switch byte {
        case 0x7B:
            var members = [[UInt8]: JSONValue]()
            var key = try beginObject()
            while let current = key {
                if keeping?(current) ?? true {
                    members[decoded(current)] = try buildValue(keeping: nil)
                } else {
                    _ = try scanValue()
                }
                key = try nextKey()
            }
            return .object(members)
        case 0x5B:
            var elements = [JSONValue]()
            var more = try beginArray()
            while more {
                elements.append(try buildValue(keeping: nil))
                more = try nextElement()
            }
            return .array(elements)
        case 0x22:
            return .string(decoded(try scanString()))
        default:
            let value = try scanValue()
            switch value.kind {
            case .number: return .number(canonicalNumber(value.start..<value.end))
            case .bool: return .bool(base[value.start] == 0x74)
            default: return .null
            }
        }
    }
}
