/// A member name looked for while scanning: its UTF-8 text and the hash the scanner gives a
/// string that says it, so that most keys are told apart by one comparison of hashes.
package struct JSONName: Sendable, Equatable {
    package let bytes: [UInt8]
    package let hash: UInt64
    /// The name again where it is at most 16 bytes: compared from here, with no array.
    package let short: Short?

    /// A name of up to 16 bytes, in two words (little-endian, zero-padded).
    package struct Short: Sendable, Equatable {
        @usableFromInline let hash: UInt64
        @usableFromInline let low: UInt64, high: UInt64
        @usableFromInline let count: Int

        /// The name's bytes.
        @usableFromInline var bytes: [UInt8] {
            (0..<count).map { UInt8(truncatingIfNeeded: ($0 < 8 ? low : high) >> UInt64(8 * ($0 & 7))) }
        }
    }

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var writer = JSONWriter()
        bytes.withUnsafeBufferPointer { writer.string(generalizedUTF8: $0) }
        let hash = writer.bytes.withUnsafeBufferPointer { text in
            var scanner = JSONScanner(text)
            // The writer's output is a valid string; 0 would only make every lookup compare bytes.
            return (try? scanner.scanValue().hash) ?? 0
        }
        self.hash = hash
        if bytes.count <= 16 {
            var words: (UInt64, UInt64) = (0, 0)
            for (k, byte) in bytes.enumerated() {
                if k < 8 { words.0 |= UInt64(byte) << UInt64(8 * k) } else { words.1 |= UInt64(byte) << UInt64(8 * (k - 8)) }
            }
            short = Short(hash: hash, low: words.0, high: words.1, count: bytes.count)
        } else {
            short = nil
        }
    }

    package init(_ text: String) { self.init(Array(text.utf8)) }
}

extension JSONScanner {
    /// Whether a scanned string says exactly `name`, escapes resolved.
    @inlinable @inline(__always)
    package func string(_ string: ScannedString, is name: JSONName) -> Bool {
        if let short = name.short { return self.string(string, isShort: short) }
        if hashing && string.hash != name.hash && name.hash != 0 { return false }
        return self.string(string, equals: name.bytes)
    }

    /// Compares with a name of up to 16 bytes without reaching its array (no reference
    /// counting on the hot path).
    @inlinable @inline(__always)
    func string(_ string: ScannedString, isShort name: JSONName.Short) -> Bool {
        if hashing && string.hash != name.hash && name.hash != 0 { return false }
        let length = string.end - string.start
        if string.hasEscapes { return decoded(string) == name.bytes }
        guard length == name.count else { return false }
        // Two words where the text has 16 bytes from the string's start (it goes on past the
        // closing quote); byte by byte near the end of the text.
        if string.start + 16 <= count {
            let raw = UnsafeRawPointer(base + string.start)
            let low = raw.loadUnaligned(as: UInt64.self), high = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            let masks = twoWordMasks(length)
            return low & masks.low == name.low && high & masks.high == name.high
        }
        for k in 0..<length {
            let word = k < 8 ? name.low : name.high
            if base[string.start + k] != UInt8(truncatingIfNeeded: word >> UInt64(8 * (k & 7))) { return false }
        }
        return true
    }
}

/// Masks for the first `length` bytes (0 to 16) of text loaded as two little-endian words.
@usableFromInline @inline(__always)
func twoWordMasks(_ length: Int) -> (low: UInt64, high: UInt64) {
    (
        length >= 8 ? .max : ~(UInt64.max &<< UInt64(8 * length)),
        length <= 8 ? 0 : length == 16 ? .max : ~(UInt64.max &<< UInt64(8 * (length - 8)))
    )
}
