#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension JSONScanner {
    /// At a quote: reads a string, checking UTF-8 and escapes, and hashes what it says.
    ///
    /// Most strings (keys, ids, short values) are plain ASCII and end within 16 bytes: those
    /// are read here, inline in the caller, their 16 bytes classified at once (`ByteLanes`);
    /// anything else goes to `scanLongString`.
    @inline(__always)
    package mutating func scanString() throws(JSONError) -> ScannedString {
        let start = position + 1
        guard start + 16 <= count else { return try scanLongString() }
        let attention = ByteLanes(base + start).attention
        // Sixteen plain bytes: the rest goes on from there.
        if attention == 0 { return try scanLongString(afterSixteen: start) }
        let length = attention.trailingZeroBitCount
        guard base[start + length] == 0x22 else { return try scanLongString() }
        var hasher = StreamHasher(seed: ValueHash.stringTag, key: key)
        if hashing { hasher.feed(plain: UnsafeRawPointer(base + start), count: length) }
        position = start + length + 1
        return ScannedString(hash: hashing ? hasher.finish() : 0, start: start, end: start + length, hasEscapes: false)
    }

    /// `scanString` for any string: long ones, escapes, non-ASCII, errors.
    @inline(never)
    mutating func scanLongString() throws(JSONError) -> ScannedString {
        try scanLongString(from: position + 1, of: position + 1, hasher: StreamHasher(seed: ValueHash.stringTag, key: key))
    }

    /// `scanString` where the string's first 16 bytes are plain ASCII.
    @inline(never)
    mutating func scanLongString(afterSixteen start: Int) throws(JSONError) -> ScannedString {
        var hasher = StreamHasher(seed: ValueHash.stringTag, key: key)
        if hashing { hasher.feed(plain: UnsafeRawPointer(base + start), count: 16) }
        return try scanLongString(from: start + 16, of: start, hasher: hasher)
    }

    /// Reads on from `position` in the string whose first byte is at `start`, all of it plain
    /// ASCII before `position` and fed to `hasher` already.
    @inline(__always)
    mutating func scanLongString(from position: Int, of start: Int, hasher: StreamHasher) throws(JSONError) -> ScannedString {
        // Locals, not properties, in the loop: they stay in registers.
        let base = self.base, count = self.count, hashing = self.hashing
        var position = position
        defer { self.position = position }
        var hasher = hasher
        var hasEscapes = false
        while true {
            // Sixteen bytes at a time up to the first that needs a closer look; plain ASCII
            // before it goes to the hash in words.
            while position + 16 <= count {
                let attention = ByteLanes(base + position).attention
                let plain = attention == 0 ? 16 : attention.trailingZeroBitCount
                if hashing { hasher.feed(plain: UnsafeRawPointer(base + position), count: plain) }
                position += plain
                if attention != 0 { break }
            }
            guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
            let byte = base[position]
            switch byte {
            case 0x22:
                position += 1
                return ScannedString(hash: hashing ? hasher.finish() : 0, start: start, end: position - 1, hasEscapes: hasEscapes)
            case 0x5C:
                hasEscapes = true
                self.position = position
                let (word, length) = try scanEscape()
                position = self.position
                if hashing { hasher.feed(partial: word, count: length) }
            case 0..<0x20:
                throw JSONError(.controlCharacterInString, at: position)
            case 0x20..<0x80:
                if hashing { hasher.feed(partial: UInt64(byte), count: 1) }
                position += 1
            default:
                self.position = position
                let length = try scanMultibyte()
                if hashing {
                    var word: UInt64 = 0
                    for k in 0..<length { word |= UInt64(base[position + k]) << UInt64(k * 8) }
                    hasher.feed(partial: word, count: length)
                }
                position += length
            }
        }
    }

    /// At a backslash: reads one escape and returns the UTF-8 bytes it stands for (packed
    /// little-endian, 1 to 4 of them). A lone surrogate (allowed by RFC 8259's grammar) comes
    /// out as its 3-byte generalized UTF-8.
    mutating func scanEscape() throws(JSONError) -> (word: UInt64, count: Int) {
        guard position + 1 < count else { throw JSONError(.unexpectedEnd, at: position + 1) }
        let escape = base[position + 1]
        let simple: UInt8? =
            switch escape {
            case 0x22: 0x22
            case 0x5C: 0x5C
            case 0x2F: 0x2F
            case 0x62: 0x08
            case 0x66: 0x0C
            case 0x6E: 0x0A
            case 0x72: 0x0D
            case 0x74: 0x09
            default: nil
            }
        if let simple {
            position += 2
            return (UInt64(simple), 1)
        }
        guard escape == 0x75 else { throw JSONError(.invalidEscape, at: position) }
        var scalar = try hex4(at: position + 2)
        position += 6
        if (0xD800..<0xDC00).contains(scalar), position + 6 <= count, base[position] == 0x5C, base[position + 1] == 0x75 {
            let low = try hex4(at: position + 2)
            if (0xDC00..<0xE000).contains(low) {
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                position += 6
            }
        }
        var word: UInt64 = 0
        var length = 0
        Self.encodeUTF8(scalar) {
            word |= UInt64($0) << UInt64(length * 8)
            length += 1
        }
        return (word, length)
    }

    private func hex4(at offset: Int) throws(JSONError) -> UInt32 {
        guard offset + 4 <= count else { throw JSONError(.unexpectedEnd, at: count) }
        var value: UInt32 = 0
        for k in 0..<4 {
            let byte = base[offset + k]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw JSONError(.invalidEscape, at: offset + k)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    static func encodeUTF8(_ scalar: UInt32, _ emit: (UInt8) -> Void) {
        switch scalar {
        case 0..<0x80:
            emit(UInt8(scalar))
        case 0x80..<0x800:
            emit(UInt8(0xC0 | scalar >> 6))
            emit(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            emit(UInt8(0xE0 | scalar >> 12))
            emit(UInt8(0x80 | scalar >> 6 & 0x3F))
            emit(UInt8(0x80 | scalar & 0x3F))
        default:
            emit(UInt8(0xF0 | scalar >> 18))
            emit(UInt8(0x80 | scalar >> 12 & 0x3F))
            emit(UInt8(0x80 | scalar >> 6 & 0x3F))
            emit(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// What a well-formed UTF-8 sequence starting with `lead` (>= 0x80) is: its length and
    /// the range its second byte must fall in, which rules out overlongs, surrogates and
    /// anything past U+10FFFF; nil where no sequence starts so. Its other bytes are 0x80...0xBF.
    @inline(__always)
    static func utf8Sequence(lead: UInt8) -> (length: Int, second: ClosedRange<UInt8>)? {
        switch lead {
        case 0xC2...0xDF: (2, 0x80...0xBF)
        case 0xE0: (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (3, 0x80...0xBF)
        case 0xED: (3, 0x80...0x9F)
        case 0xF0: (4, 0x90...0xBF)
        case 0xF1...0xF3: (4, 0x80...0xBF)
        case 0xF4: (4, 0x80...0x8F)
        default: nil
        }
    }

    /// At a byte >= 0x80: checks one well-formed UTF-8 sequence, steps over it and returns
    /// its length.
    mutating func scanMultibyte() throws(JSONError) -> Int {
        guard let (length, secondRange) = Self.utf8Sequence(lead: base[position]) else { throw JSONError(.invalidUTF8, at: position) }
        guard position + length <= count else { throw JSONError(.invalidUTF8, at: position) }
        guard secondRange.contains(base[position + 1]) else { throw JSONError(.invalidUTF8, at: position + 1) }
        for k in 2..<max(2, length) where !(0x80...0xBF).contains(base[position + k]) {
            throw JSONError(.invalidUTF8, at: position + k)
        }
        position += length
        return length
    }

    /// The unescaped UTF-8 bytes of a scanned string.
    package func decoded(_ string: ScannedString) -> [UInt8] {
        if !string.hasEscapes { return Array(UnsafeBufferPointer(start: base + string.start, count: string.end - string.start)) }
        var copy = JSONScanner(UnsafeBufferPointer(start: base, count: count))
        copy.position = string.start
        var bytes = [UInt8]()
        bytes.reserveCapacity(string.end - string.start)
        while copy.position < string.end {
            let byte = base[copy.position]
            if byte == 0x5C {
                // Validated already: this cannot fail.
                guard let (word, length) = try? copy.scanEscape() else { break }
                for k in 0..<length { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(k * 8))) }
            } else {
                bytes.append(byte)
                copy.position += 1
            }
        }
        return bytes
    }

    /// Whether `range` of the text holds a backslash (within a string: whether it has escapes).
    func holdsBackslash(_ range: Range<Int>) -> Bool {
        !range.isEmpty && memchr(base + range.lowerBound, 0x5C, range.count) != nil
    }

    /// The text of a scanned string, escapes resolved. A short plain string is made straight
    /// from the body, with no allocation.
    package func text(_ string: ScannedString) -> String {
        if string.hasEscapes { return String(decoding: decoded(string), as: UTF8.self) }
        return String(decoding: UnsafeBufferPointer(start: base + string.start, count: string.end - string.start), as: UTF8.self)
    }

    /// Whether a scanned string says exactly `expected` (UTF-8), escapes resolved.
    @inlinable
    package func string(_ string: ScannedString, equals expected: [UInt8]) -> Bool {
        if string.hasEscapes { return decoded(string) == expected }
        guard string.end - string.start == expected.count else { return false }
        return expected.withUnsafeBufferPointer { expected in
            expected.isEmpty || memcmp(base + string.start, expected.baseAddress!, expected.count) == 0
        }
    }
}
