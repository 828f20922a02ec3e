import ByteJSON
import MicroHTTP

/// Which top-level fields of an item count for its content (the data-factory idea over HTTP).
public enum ContentFilter: Sendable, Equatable {
    case allFields
    case only([[UInt8]])
    case except([[UInt8]])

    /// Whether a member with this key counts.
    @inline(__always)
    func includes(_ key: ScannedString, in scanner: JSONScanner) -> Bool {
        switch self {
        case .allFields: true
        case .only(let keys): keys.contains { scanner.string(key, equals: $0) }
        case .except(let keys): !keys.contains { scanner.string(key, equals: $0) }
        }
    }
}

/// The bytes that items point into: a request body, and canonical ids that are not spelled
/// verbatim in it. It lives as long as any item read from it.
// @unchecked Sendable: the two buffers belong to `owners`, which this object keeps alive; they
// are written once before it exists and only read while it does.
public final class JSONDocument: @unchecked Sendable {
    let body: UnsafeBufferPointer<UInt8>
    let arena: UnsafeBufferPointer<UInt8>
    private let owners: (body: ByteBuffer, arena: ByteBuffer)
    /// How items of this document compare their content.
    let filter: ContentFilter
    /// The member of a section that holds its items (not part of the section's own content).
    let itemsKey: [UInt8]

    init(body: ByteBuffer, arena: [UInt8], filter: ContentFilter, itemsKey: [UInt8]) {
        let arena = ByteBuffer(arena)
        owners = (body, arena)
        self.body = body.bytes
        self.arena = arena.bytes
        self.filter = filter
        self.itemsKey = itemsKey
    }

    @inline(__always)
    func slice(_ start: UInt32, _ length: UInt32, inArena: Bool) -> UnsafeBufferPointer<UInt8> {
        let storage = inArena ? arena : body
        return UnsafeBufferPointer(rebasing: storage[Int(start)..<Int(start + length)])
    }
}

/// Byte ranges are 32-bit: a document holds at most 4 GiB, far above any body limit.
struct ByteRange: Sendable, Equatable {
    var start: UInt32
    var length: UInt32

    init(_ range: Range<Int>) {
        start = UInt32(truncatingIfNeeded: range.lowerBound)
        length = UInt32(truncatingIfNeeded: range.count)
    }

    var range: Range<Int> { Int(start)..<Int(start + length) }
}
