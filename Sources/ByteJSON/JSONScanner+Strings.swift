#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension JSONScanner {
    /// At a quote: reads a string, checking UTF-8 and escapes, and hashes what it says.
    public mutating func scanString() throws(JSONError) -> ScannedString {
        position += 1  // the opening quote
        let start = position
        var hasher = StreamHasher(seed: ValueHash.stringTag)
        var hasEscapes = false
        while true {
            // Eight plain ASCII bytes at a time.
            while position + 8 <= count {
                let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
                if Self.needsAttention(word) { break }
                hasher.feed(word: word)
                position += 8
            }
            guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
            let byte = base[position]
            switch byte {
            case 0x22:
                position += 1
                return ScannedString(hash: hasher.finish(), start: start, end: position - 1, hasEscapes: hasEscapes)
            case 0x5C:
                hasEscapes = true
                try scanEscape { hasher.feed(byte: $0) }
            case 0..<0x20:
                throw JSONError(.controlCharacterInString, at: position)
            case 0x20..<0x80:
                hasher.feed(byte: byte)
                position += 1
            default:
                try scanMultibyte { hasher.feed(byte: $0) }
            }
        }
    }

    /// Whether a word holds a quote, a backslash, a control character or a non-ASCII byte.
    @inline(__always)
    static func needsAttention(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl | word) & highs != 0
    }

    /// At a backslash: reads one escape and emits the UTF-8 bytes it stands for. A lone
    /// surrogate (allowed by RFC 8259's grammar) is emitted as its 3-byte generalized UTF-8.
    mutating func scanEscape(_ emit: (UInt8) -> Void) throws(JSONError) {
        guard position + 1 < count else { throw JSONError(.unexpectedEnd, at: position + 1) }
        let escape = base[position + 1]
        let simple: UInt8? = switch escape {
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
            emit(simple)
            position += 2
            return
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
        Self.encodeUTF8(scalar, emit)
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

    /// At a byte >= 0x80: checks one well-formed UTF-8 sequence (no overlongs, no surrogates,
    /// nothing past U+10FFFF) and emits its bytes.
    mutating func scanMultibyte(_ emit: (UInt8) -> Void) throws(JSONError) {
        let lead = base[position]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw JSONError(.invalidUTF8, at: position)
        }
        guard position + length <= count else { throw JSONError(.invalidUTF8, at: position) }
        guard secondRange.contains(base[position + 1]) else { throw JSONError(.invalidUTF8, at: position + 1) }
        for k in 2..<max(2, length) where !(0x80...0xBF).contains(base[position + k]) {
            throw JSONError(.invalidUTF8, at: position + k)
        }
        for k in 0..<length { emit(base[position + k]) }
        position += length
    }

    /// The unescaped UTF-8 bytes of a scanned string.
    public func decoded(_ string: ScannedString) -> [UInt8] {
        if !string.hasEscapes { return Array(UnsafeBufferPointer(start: base + string.start, count: string.end - string.start)) }
        var copy = JSONScanner(UnsafeBufferPointer(start: base, count: count))
        copy.position = string.start
        var bytes = [UInt8]()
        bytes.reserveCapacity(string.end - string.start)
        while copy.position < string.end {
            let byte = base[copy.position]
            if byte == 0x5C {
                // Validated already: this cannot throw.
                try? copy.scanEscape { bytes.append($0) }
            } else {
                bytes.append(byte)
                copy.position += 1
            }
        }
        return bytes
    }

    /// Whether a scanned string says exactly `expected` (UTF-8), escapes resolved.
    public func string(_ string: ScannedString, equals expected: [UInt8]) -> Bool {
        if string.hasEscapes { return decoded(string) == expected }
        guard string.end - string.start == expected.count else { return false }
        return expected.withUnsafeBufferPointer { expected in
            expected.isEmpty || memcmpEqual(base + string.start, expected.baseAddress!, expected.count)
        }
    }
}

@inline(__always)
func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    memcmp(a, b, count) == 0
}
