/// The keys of the objects one level into a scanned value, remembered by their place: items of
/// an array mostly spell the same keys in the same order, so the next item's key at the same
/// place is first compared with the bytes seen there last time, and where they agree its hash
/// is taken from memory rather than computed again.
///
/// A key is remembered only as it was read: without escapes, with its colon right after the
/// closing quote, and at most 14 bytes long, so that the key, its quote and colon fit in two
/// words. Bytes that agree with a key that passed the scanner's checks pass them too, and hash
/// the same (the hash depends on the bytes and the process's key only).
package struct KeyShapes {
    /// Places remembered: the first keys of an object.
    static var places: Int { Storage.count }
    private typealias Storage = InlineArray<8, Shape>

    package init() {}

    struct Shape {
        /// The key's bytes, then its closing quote and the colon, in two words (zero-padded).
        var low: UInt64 = 0, high: UInt64 = 0
        /// Which bytes of the words count; none while nothing is remembered.
        var lowMask: UInt64 = 0, highMask: UInt64 = 0
        var length = 0
        var hash: UInt64 = 0
    }

    private var shapes = Storage(repeating: Shape())

    /// The key at `start` (the byte after its opening quote) where it spells the one remembered
    /// at `place`; the text must have 16 bytes from `start`.
    @inline(__always)
    func match(_ place: Int, at start: Int, in base: UnsafePointer<UInt8>) -> ScannedString? {
        let shape = shapes[place]
        let raw = UnsafeRawPointer(base + start)
        let low = raw.loadUnaligned(as: UInt64.self), high = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        // A place with nothing remembered has no mask, and would match anything.
        guard shape.lowMask != 0, (low ^ shape.low) & shape.lowMask | (high ^ shape.high) & shape.highMask == 0 else { return nil }
        return ScannedString(hash: shape.hash, start: start, end: start + shape.length, hasEscapes: false)
    }

    /// Remembers `key`, read by the scanner, at `place` where it can be matched next time:
    /// `colon` is where the scanner found the colon after it.
    @inline(__always)
    mutating func remember(_ place: Int, _ key: ScannedString, colon: Int, in base: UnsafePointer<UInt8>, count: Int) {
        let span = key.end - key.start + 2
        guard !key.hasEscapes, colon == key.end + 1, span <= 16, key.start + 16 <= count else { return }
        let raw = UnsafeRawPointer(base + key.start)
        let masks = twoWordMasks(span)
        shapes[place] = Shape(
            low: raw.loadUnaligned(as: UInt64.self) & masks.low, high: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self) & masks.high,
            lowMask: masks.low, highMask: masks.high, length: span - 2, hash: key.hash)
    }
}
