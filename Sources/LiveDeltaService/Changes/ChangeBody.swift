import ByteJSON
import MicroHTTP

/// A change posted to `POST /sessions/{id}/changes`: keyed operations (`application/json`) or an
/// RFC 6902 patch (`application/json-patch+json`), read into operations whose values stay
/// where they lie in the body (byte ranges), to be copied, not rebuilt.
struct ChangeBody {
    enum Operations {
        case keyed([KeyedOperation])
        case patch([PatchOperation])
    }

    let body: ByteBuffer
    let operations: Operations
    /// The keyed form's `options` (answer spelling only); the patch form's come from the query.
    let options: JSONValue?
    let baseVersion: UInt64?

    /// The operations' member in the keyed form, the root in a patch: what pointers start with.
    var root: JSONPointer {
        switch operations {
        case .keyed: JSONPointer("operations")
        case .patch: JSONPointer()
        }
    }

    var count: Int {
        switch operations {
        case .keyed(let list): list.count
        case .patch(let list): list.count
        }
    }

    /// The text of a range of the body.
    func text(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: body.bytes[range]) }

    static let maxOperations = 100_000

    init(_ request: HTTPRequest, limits: ReadLimits) throws(APIError) {
        body = request.body
        let type = request.header("Content-Type").map { $0.prefix { $0 != ";" }.trimmingSpaces.lowercased() } ?? ""
        var scanner = JSONScanner(request.body.bytes, maxDepth: limits.maxDepth)
        scanner.hashing = false
        var check = scanner
        _ = try json { () throws(JSONError) in try check.scanDocument() }
        do {
            if type == "application/json-patch+json" {
                operations = .patch(try Self.patch(&scanner))
                options = nil
                baseVersion = nil
            } else if type == "application/json" {
                var operations: [KeyedOperation]?
                var options: JSONValue?
                var baseVersion: UInt64?
                guard scanner.peek() == UInt8(ascii: "{") else {
                    throw APIError.invalidShape(JSONPointer(), "the body must be an object with \"operations\" (and \"options\", \"baseVersion\")")
                }
                var key = try json { () throws(JSONError) in try scanner.beginObject() }
                while let current = key {
                    switch scanner.text(current) {
                    case "operations": operations = try Self.keyed(&scanner)
                    case "options": options = try json { () throws(JSONError) in try scanner.buildValue(keeping: nil) }
                    case "baseVersion":
                        guard case .number(let number) = try json({ () throws(JSONError) in try scanner.buildValue(keeping: nil) }),
                            let version = number.nonNegativeInt
                        else {
                            throw APIError.invalidShape(JSONPointer("baseVersion"), "baseVersion must be a whole number from 0 to \(Int.max)")
                        }
                        baseVersion = UInt64(version)
                    case let name:
                        throw APIError.invalidShape(
                            JSONPointer(name), "unknown member \"\(name)\"; the body takes \"operations\", \"options\", \"baseVersion\"")
                    }
                    key = try json { () throws(JSONError) in try scanner.nextKey() }
                }
                guard let operations else { throw APIError.invalidShape(JSONPointer("operations"), "the body needs \"operations\", a list") }
                self.operations = .keyed(operations)
                self.options = options
                self.baseVersion = baseVersion
            } else {
                throw APIError(
                    .unsupportedMediaType,
                    message: "changes are application/json (keyed operations) or application/json-patch+json (an RFC 6902 patch)"
                        + (type.isEmpty ? "; the body has no Content-Type" : "; the body is \(type)"))
            }
        }
        guard count <= Self.maxOperations else {
            throw .invalidShape(root, "a change holds at most \(Self.maxOperations) operations; this one holds \(count)")
        }
    }

    // MARK: - Keyed operations

    private static func keyed(_ scanner: inout JSONScanner) throws(APIError) -> [KeyedOperation] {
        let at = JSONPointer("operations")
        guard scanner.peek() == UInt8(ascii: "[") else { throw APIError.invalidShape(at, "operations must be a list") }
        var list: [KeyedOperation] = []
        var more = try json { () throws(JSONError) in try scanner.beginArray() }
        while more {
            list.append(try KeyedOperation(&scanner, at: at.appending(list.count)))
            more = try json { () throws(JSONError) in try scanner.nextElement() }
        }
        return list
    }

    // MARK: - RFC 6902

    private static func patch(_ scanner: inout JSONScanner) throws(APIError) -> [PatchOperation] {
        guard scanner.peek() == UInt8(ascii: "[") else { throw APIError.invalidShape(JSONPointer(), "a JSON Patch is a list of operations") }
        var list: [PatchOperation] = []
        var more = try json { () throws(JSONError) in try scanner.beginArray() }
        while more {
            list.append(try PatchOperation(&scanner, at: JSONPointer(String(list.count))))
            more = try json { () throws(JSONError) in try scanner.nextElement() }
        }
        return list
    }
}

/// Members of an operation object, each as the range of its value, read once.
struct OperationMembers {
    private var members: [(name: String, value: ScannedValue)] = []

    init(_ scanner: inout JSONScanner, at pointer: JSONPointer, what: String) throws(APIError) {
        guard scanner.peek() == UInt8(ascii: "{") else {
            throw APIError(.invalidOperation, message: "\(what) must be an object", pointer: pointer.description)
        }
        // Names seen, in a table: an operation may come with any number of members.
        var names = Set<String>()
        var key = try json { () throws(JSONError) in try scanner.beginObject() }
        while let current = key {
            let name = scanner.text(current)
            scanner.skipWhitespace()
            let value = try json { () throws(JSONError) in try scanner.scanValue() }
            if !names.insert(name).inserted { throw APIError.duplicateMember(pointer.appending(name)) }
            members.append((name, value))
            key = try json { () throws(JSONError) in try scanner.nextKey() }
        }
    }

    subscript(_ name: String) -> ScannedValue? { members.first { $0.name == name }?.value }

    var names: [String] { members.map(\.name) }
}

extension ScannedValue {
    var range: Range<Int> { start..<end }
}

extension JSONScanner {
    /// A string value's decoded text.
    func string(_ value: ScannedValue) -> String? {
        guard value.kind == .string else { return nil }
        return text(ScannedString(hash: value.hash, start: value.start + 1, end: value.end - 1, hasEscapes: value.hasEscapes))
    }
}
