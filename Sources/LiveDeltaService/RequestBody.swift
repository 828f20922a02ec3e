import ByteJSON
import MicroHTTP

/// A JSON body checked in full (a 400 for anything that is not RFC 8259 JSON), whose top level
/// is an object, with where each of its members' values starts.
struct RequestBody {
    let bytes: ByteBuffer
    private var positions: [String: Int] = [:]

    /// Checks the whole body in one pass that hashes nothing, noting where the members start.
    ///
    /// - Parameter allowed: the only top-level keys the body may hold.
    init(_ body: ByteBuffer, allowed: [String], maxDepth: Int) throws(APIError) {
        bytes = body
        var scanner = JSONScanner(bytes.bytes, maxDepth: maxDepth)
        scanner.hashing = false
        var unknown: String?
        do {
            guard scanner.peek() == UInt8(ascii: "{") else {
                _ = try scanner.scanDocument()
                throw APIError.invalidShape(JSONPointer(), "the body must be a JSON object with \(allowed.map { "\"\($0)\"" }.joined(separator: ", "))")
            }
            var key = try scanner.beginObject()
            while let current = key {
                let name = String(decoding: scanner.decoded(current), as: UTF8.self)
                if !allowed.contains(name) { unknown = unknown ?? name }
                scanner.skipWhitespace()
                positions[name] = scanner.position
                _ = try scanner.scanValue()
                key = try scanner.nextKey()
            }
            scanner.skipWhitespace()
            if scanner.position < scanner.count { throw JSONError(.trailingContent, at: scanner.position) }
        } catch let error as JSONError {
            throw .malformedJSON(error)
        } catch let error as APIError {
            throw error
        } catch {
            preconditionFailure("the scanner throws only JSONError")
        }
        if let unknown {
            throw .invalidShape(JSONPointer(unknown), "unknown member \"\(unknown)\"; the body takes \(allowed.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
    }

    func position(of key: String) -> Int? { positions[key] }

    /// What kind of value a member holds.
    func kind(of key: String) -> JSONKind? {
        guard let position = positions[key] else { return nil }
        var scanner = scanner(maxDepth: 1)
        scanner.position = position
        return switch scanner.peek() {
        case UInt8(ascii: "["): .array
        case UInt8(ascii: "{"): .object
        default: nil
        }
    }

    func scanner(maxDepth: Int) -> JSONScanner { JSONScanner(bytes.bytes, maxDepth: maxDepth) }

    /// The value of `key` as a tree, for small members such as options.
    func tree(_ key: String, maxDepth: Int) -> JSONValue? {
        guard let position = positions[key] else { return nil }
        var scanner = scanner(maxDepth: maxDepth)
        scanner.position = position
        return try? scanner.buildValue(keeping: nil)
    }

    /// The options member, or defaults.
    func options(maxDepth: Int) throws(APIError) -> DiffOptions {
        guard let value = tree("options", maxDepth: maxDepth) else { return DiffOptions() }
        return try DiffOptions(value, at: JSONPointer("options"))
    }
}
