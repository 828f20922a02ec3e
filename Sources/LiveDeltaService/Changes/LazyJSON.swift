import ByteJSON

/// A JSON document under a patch, opened only where the patch goes: a value stays as its text
/// until a path goes into it, and then only that level is opened (members keep their order and
/// their text). Writing it back copies the untouched texts as they are.
enum LazyJSON {
    case text(UnsafeBufferPointer<UInt8>)
    case owned([UInt8])
    /// An overlay, so that a patch's inserts and removes in a long array move one chunk each
    /// (boxed: the overlay is larger than the other cases, and every value would carry it).
    indirect case array(ListOverlay<LazyJSON>)
    /// By name through a table, so that a patch's operations on a large object cost a lookup.
    case object(LazyMembers)

    /// Opens one level: an array's elements, an object's members (scalars stay text).
    mutating func open() {
        let bytes: UnsafeBufferPointer<UInt8>
        switch self {
        case .text(let text): bytes = text
        case .owned(let text):
            // Owned texts are small (values in a patch); opening one keeps its parts as owned.
            self = text.withUnsafeBufferPointer { Self.owning(Self.parsed($0)) }
            return
        case .array, .object: return
        }
        self = Self.parsed(bytes)
    }

    private static func parsed(_ bytes: UnsafeBufferPointer<UInt8>) -> LazyJSON {
        var scanner = JSONScanner(bytes, maxDepth: 1_000)
        scanner.hashing = false
        scanner.skipWhitespace()
        do {
            switch scanner.peek() {
            case UInt8(ascii: "["):
                var elements: [LazyJSON] = []
                var more = try scanner.beginArray()
                while more {
                    scanner.skipWhitespace()
                    let value = try scanner.scanValue()
                    elements.append(.text(scanner.slice(value.start..<value.end)))
                    more = try scanner.nextElement()
                }
                return .array(ListOverlay(elements))
            case UInt8(ascii: "{"):
                var members = LazyMembers()
                var key = try scanner.beginObject()
                while let current = key {
                    let name = scanner.decoded(current)
                    scanner.skipWhitespace()
                    let value = try scanner.scanValue()
                    // The last of repeated names wins, as everywhere in the service.
                    members.append(name, .text(scanner.slice(value.start..<value.end)))
                    key = try scanner.nextKey()
                }
                return .object(members)
            default:
                return .text(bytes)
            }
        } catch {
            // Every text here was validated when it was read.
            return .text(bytes)
        }
    }

    /// Turns texts that point into a buffer about to go into owned copies.
    static func owning(_ node: LazyJSON) -> LazyJSON {
        switch node {
        case .text(let text): .owned(Array(text))
        case .owned: node
        case .array(let elements): .array(ListOverlay(elements.lazy.map(owning)))
        case .object(let members): .object(LazyMembers(members.map { ($0.name, owning($0.value)) }))
        }
    }

    func write(_ writer: inout JSONWriter) {
        switch self {
        case .text(let text): writer.raw(text)
        case .owned(let text): text.withUnsafeBufferPointer { writer.raw($0) }
        case .array(let elements):
            writer.raw("[")
            for (index, element) in elements.enumerated() {
                if index > 0 { writer.raw(",") }
                element.write(&writer)
            }
            writer.raw("]")
        case .object(let members):
            writer.raw("{")
            for (index, member) in members.enumerated() {
                if index > 0 { writer.raw(",") }
                member.name.withUnsafeBufferPointer { writer.string(generalizedUTF8: $0) }
                writer.raw(":")
                member.value.write(&writer)
            }
            writer.raw("}")
        }
    }

    /// The bytes `write` would write (names counted as their raw bytes and quotes), or nil
    /// where that is more than `limit`. Stops at the limit: a value built by copies may share
    /// its parts many times over, and its size may be far past anything worth walking.
    func byteCount(upTo limit: Int) -> Int? {
        var total = 0
        func add(_ node: LazyJSON) -> Bool {
            switch node {
            case .text(let text): total += text.count
            case .owned(let text): total += text.count
            case .array(let elements):
                total += 1 + max(elements.count, 1)
                guard total <= limit else { return false }
                for element in elements where !add(element) { return false }
            case .object(let members):
                total += 1 + max(members.count, 1)
                for member in members {
                    total += member.name.count + 3
                    guard total <= limit, add(member.value) else { return false }
                }
            }
            return total <= limit
        }
        return add(self) ? total : nil
    }

    /// Runs `body` on an array's elements (nil for any other value), held by nothing else
    /// meanwhile: a switch over the value in place keeps a second reference to them, and the
    /// first change would copy them all.
    mutating func withElements<T, Failure: Error>(_ body: (inout ListOverlay<LazyJSON>) throws(Failure) -> T) throws(Failure) -> T? {
        guard case .array(var elements) = self else { return nil }
        self = .owned([])
        defer { self = .array(elements) }
        return try body(&elements)
    }

    /// Runs `body` on an object's members (nil for any other value), held by nothing else
    /// meanwhile (as `withElements`).
    mutating func withMembers<T, Failure: Error>(_ body: (inout LazyMembers) throws(Failure) -> T) throws(Failure) -> T? {
        guard case .object(var members) = self else { return nil }
        self = .owned([])
        defer { self = .object(members) }
        return try body(&members)
    }

    var bytes: [UInt8] {
        var writer = JSONWriter()
        write(&writer)
        return writer.bytes
    }

    /// The value, for `test` (compared by meaning).
    var value: JSONValue? {
        bytes.withUnsafeBufferPointer { try? JSONValue(parsing: $0, maxDepth: 1_000) }
    }
}
