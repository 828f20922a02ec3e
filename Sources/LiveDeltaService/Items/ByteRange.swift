/// Where an id's canonical bytes are.
enum IDStorage: UInt8, Sendable {
    /// Verbatim in the body (a string without escapes, a boolean, null).
    case body
    /// In the document's arena (a string with escapes, a number that is not a small integer).
    case arena
    /// No bytes: a whole number that fits in Int64, kept in the range's 64 bits.
    case inline
}

/// Folds a 64-bit hash to the 32 bits an item keeps (a match is always confirmed by bytes).
@inline(__always)
func fold(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash ^ (hash >> 32)) }

/// Byte ranges are 32-bit: a document holds at most 4 GiB, far above any body limit.
struct ByteRange: Sendable, Equatable {
    var start: UInt32
    var length: UInt32

    init(_ range: Range<Int>) {
        start = UInt32(truncatingIfNeeded: range.lowerBound)
        length = UInt32(truncatingIfNeeded: range.count)
    }

    init(inline value: Int64) {
        start = UInt32(truncatingIfNeeded: UInt64(bitPattern: value))
        length = UInt32(truncatingIfNeeded: UInt64(bitPattern: value) >> 32)
    }

    var range: Range<Int> { Int(start)..<Int(start + length) }

    var inlineValue: Int64 { Int64(bitPattern: UInt64(start) | UInt64(length) << 32) }
}
