// The JSON scanner as it was before the faster one (commit 3f0682f), kept frozen as the
// reference that ReferenceComparisonTests holds the library's scanner to: the same texts
// accepted, the same errors at the same offsets, the same hashes. Not to be edited, except to
// keep it compiling; the parts that did not change (number hashing) are the library's own.
@testable import ByteJSON

/// A validating, hashing reader over UTF-8 bytes that accepts exactly RFC 8259 JSON.
///
/// It builds no tree: `scanValue()` checks a whole value (any depth up to `maxDepth`, without
/// recursion) and returns its meaning hash and range; the member and element helpers walk one
/// level so that callers can pick out what they need.
struct ReferenceScanner {
    let base: UnsafePointer<UInt8>
    let count: Int
    var position: Int
    let maxDepth: Int
    /// Containers entered with `beginObject`/`beginArray` and not yet left: the depth at the
    /// cursor, so that `maxDepth` bounds the whole text however it is walked. A reader that
    /// starts inside a text sets it to the depth it starts at.
    var openDepth = 0
    /// False: check only, and report every hash as 0 (about twice as fast).
    var hashing = true
    /// The process's hash key, read once here rather than on every string.
    let key = ValueHash.processKey
    private let frames = ReferenceFrameStack()

    /// `bytes` must stay valid while the scanner is used.
    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) {
        // An empty buffer may have no address; any readable address of zero length will do.
        base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
        count = bytes.count
        position = 0
        self.maxDepth = maxDepth
    }

    /// Checks that `bytes` hold exactly one JSON value, with only whitespace around it.
    static func validate(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) throws(JSONError) {
        var scanner = ReferenceScanner(bytes, maxDepth: maxDepth)
        scanner.hashing = false
        _ = try scanner.scanDocument()
    }

    /// Reads the one value the text holds, and checks nothing but whitespace follows it.
    mutating func scanDocument() throws(JSONError) -> ScannedValue {
        let value = try scanValue()
        skipWhitespace()
        if position < count { throw JSONError(.trailingContent, at: position) }
        return value
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while position < count {
            let byte = base[position]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            position += 1
        }
    }

    /// The next byte after whitespace, without consuming it; nil at the end.
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return position < count ? base[position] : nil
    }

    // MARK: - Whole values

    /// Reads one complete value after optional whitespace.
    mutating func scanValue() throws(JSONError) -> ScannedValue {
        skipWhitespace()
        let start = position
        var depth = 0
        value: while true {
            skipWhitespace()
            guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
            var hash: UInt64
            switch base[position] {
            case 0x7B:  // {
                if openDepth + depth >= maxDepth { throw JSONError(.tooDeep(limit: maxDepth), at: position) }
                position += 1
                skipWhitespace()
                if position < count && base[position] == 0x7D {
                    position += 1
                    hash = ValueHash.object(memberSum: 0, count: 0)
                } else {
                    try push(&depth, ReferenceFrame(isObject: true, accumulator: 0, count: 0, keyHash: try scanKeyAndColon().hash))
                    continue value
                }
            case 0x5B:  // [
                if openDepth + depth >= maxDepth { throw JSONError(.tooDeep(limit: maxDepth), at: position) }
                position += 1
                skipWhitespace()
                if position < count && base[position] == 0x5D {
                    position += 1
                    hash = ValueHash.mix(ValueHash.arrayTag, 0)
                } else {
                    try push(&depth, ReferenceFrame(isObject: false, accumulator: ValueHash.arrayTag, count: 0, keyHash: 0))
                    continue value
                }
            case 0x22:
                let string = try scanString()
                if depth == 0 {
                    return ScannedValue(kind: .string, hash: string.hash, start: start, end: position, hasEscapes: string.hasEscapes)
                }
                hash = string.hash
            case 0x2D, 0x30...0x39: hash = try scanNumber()
            case 0x74: hash = try scanLiteral("true", ValueHash.true)
            case 0x66: hash = try scanLiteral("false", ValueHash.false)
            case 0x6E: hash = try scanLiteral("null", ValueHash.null)
            case let byte: throw JSONError(.unexpectedByte(byte, expected: "a value"), at: position)
            }
            // Hand the finished value to its container, closing containers that end here.
            while depth > 0 {
                let top = frames.base + (depth - 1)
                if hashing {
                    top.pointee.accumulator = top.pointee.isObject
                        ? top.pointee.accumulator &+ ValueHash.member(key: top.pointee.keyHash, value: hash)
                        : ValueHash.mix(top.pointee.accumulator, hash)
                }
                top.pointee.count += 1
                skipWhitespace()
                guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
                let byte = base[position]
                let isObject = top.pointee.isObject
                if byte == 0x2C {  // ,
                    position += 1
                    if isObject { top.pointee.keyHash = try scanKeyAndColon().hash }
                    continue value
                }
                guard byte == (isObject ? 0x7D : 0x5D) else {
                    throw JSONError(.unexpectedByte(byte, expected: isObject ? "',' or '}'" : "',' or ']'"), at: position)
                }
                position += 1
                depth -= 1
                hash = isObject
                    ? ValueHash.object(memberSum: top.pointee.accumulator, count: top.pointee.count)
                    : ValueHash.mix(top.pointee.accumulator, UInt64(top.pointee.count))
            }
            return ScannedValue(kind: Self.kind(ofFirstByte: base[start]), hash: hashing ? hash : 0, start: start, end: position)
        }
    }

    /// Opens a container; the caller has checked `depth < maxDepth`.
    @inline(__always)
    private func push(_ depth: inout Int, _ frame: ReferenceFrame) throws(JSONError) {
        if depth == frames.capacity { frames.grow() }
        (frames.base + depth).initialize(to: frame)
        depth += 1
    }

    private mutating func scanKeyAndColon() throws(JSONError) -> ScannedString {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        guard base[position] == 0x22 else {
            throw JSONError(.unexpectedByte(base[position], expected: "a string key"), at: position)
        }
        let key = try scanString()
        skipWhitespace()
        guard position < count, base[position] == 0x3A else {
            if position >= count { throw JSONError(.unexpectedEnd, at: position) }
            throw JSONError(.unexpectedByte(base[position], expected: "':'"), at: position)
        }
        position += 1
        return key
    }

    private mutating func scanLiteral(_ word: StaticString, _ hash: UInt64) throws(JSONError) -> UInt64 {
        let length = word.utf8CodeUnitCount
        for k in 0..<length {
            guard position + k < count else { throw JSONError(.unexpectedEnd, at: position + k) }
            let byte = base[position + k]
            guard byte == word.utf8Start[k] else {
                throw JSONError(.unexpectedByte(byte, expected: "'\(word)'"), at: position + k)
            }
        }
        position += length
        return hash
    }

    static func kind(ofFirstByte byte: UInt8) -> JSONKind {
        switch byte {
        case 0x7B: .object
        case 0x5B: .array
        case 0x22: .string
        case 0x74, 0x66: .bool
        case 0x6E: .null
        default: .number
        }
    }

    // MARK: - One level at a time

    /// Consumes `byte` after optional whitespace.
    mutating func expect(_ byte: UInt8, _ description: String) throws(JSONError) {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        guard base[position] == byte else {
            throw JSONError(.unexpectedByte(base[position], expected: description), at: position)
        }
        position += 1
    }

    /// At an object: enters it and returns its first key (nil for `{}`).
    mutating func beginObject() throws(JSONError) -> ScannedString? {
        try enter(0x7B, "'{'")
        skipWhitespace()
        if position < count && base[position] == 0x7D {
            position += 1
            return nil
        }
        openDepth += 1
        return try scanKeyAndColon()
    }

    /// Consumes an opening bracket, unless it would pass `maxDepth`.
    private mutating func enter(_ byte: UInt8, _ description: String) throws(JSONError) {
        skipWhitespace()
        if openDepth >= maxDepth && position < count && base[position] == byte {
            throw JSONError(.tooDeep(limit: maxDepth), at: position)
        }
        try expect(byte, description)
    }

    /// After a member's value: the next key, or nil where the object ends.
    mutating func nextKey() throws(JSONError) -> ScannedString? {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        switch base[position] {
        case 0x2C:
            position += 1
            return try scanKeyAndColon()
        case 0x7D:
            position += 1
            openDepth -= 1
            return nil
        case let byte: throw JSONError(.unexpectedByte(byte, expected: "',' or '}'"), at: position)
        }
    }

    /// At an array: enters it and says whether an element follows (false for `[]`).
    mutating func beginArray() throws(JSONError) -> Bool {
        try enter(0x5B, "'['")
        skipWhitespace()
        if position < count && base[position] == 0x5D {
            position += 1
            return false
        }
        openDepth += 1
        return true
    }

    /// After an element: whether another follows (false where the array ends).
    mutating func nextElement() throws(JSONError) -> Bool {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        switch base[position] {
        case 0x2C:
            position += 1
            return true
        case 0x5D:
            position += 1
            openDepth -= 1
            return false
        case let byte: throw JSONError(.unexpectedByte(byte, expected: "',' or ']'"), at: position)
        }
    }
}

/// One open container while `scanValue` reads.
struct ReferenceFrame {
    var isObject: Bool
    var accumulator: UInt64
    var count: Int
    var keyHash: UInt64
}

/// The open containers of `scanValue`, in memory that grows as deep as the text goes (never
/// past `maxDepth`). Copies of a scanner share it; a scanner is used by one thread, and
/// `scanValue` never runs inside another, so they never use it at once.
final class ReferenceFrameStack {
    private(set) var base: UnsafeMutablePointer<ReferenceFrame>
    private(set) var capacity: Int

    init() {
        capacity = 32
        base = .allocate(capacity: capacity)
    }

    func grow() {
        let larger = UnsafeMutablePointer<ReferenceFrame>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: capacity)
        base.deallocate()
        base = larger
        capacity *= 2
    }

    deinit { base.deallocate() }
}

extension ReferenceScanner {
    /// At a quote: reads a string, checking UTF-8 and escapes, and hashes what it says.
    mutating func scanString() throws(JSONError) -> ScannedString {
        // Locals, not properties, in the loop: they stay in registers.
        let base = self.base, count = self.count, hashing = self.hashing
        var position = self.position + 1  // past the opening quote
        defer { self.position = position }
        let start = position
        var hasher = StreamHasher(seed: ValueHash.stringTag, key: key)
        var hasEscapes = false
        while true {
            // Eight bytes at a time up to the first that needs a closer look; plain ASCII
            // before it goes to the hash in one piece.
            while position + 8 <= count {
                let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
                let attention = Self.attentionMask(word)
                if attention == 0 {
                    if hashing { hasher.feed(word: word) }
                    position += 8
                    continue
                }
                let plain = attention.trailingZeroBitCount >> 3
                if plain > 0 {
                    if hashing { hasher.feed(partial: word & (UInt64.max >> UInt64(64 - plain * 8)), count: plain) }
                    position += plain
                }
                break
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

    /// The high bit of each byte that is a quote, a backslash, a control character or
    /// non-ASCII. Exact up to the lowest set bit (later bits may be set by borrows).
    @inline(__always)
    static func attentionMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl | word) & highs
    }

    /// At a backslash: reads one escape and returns the UTF-8 bytes it stands for (packed
    /// little-endian, 1 to 4 of them). A lone surrogate (allowed by RFC 8259's grammar) comes
    /// out as its 3-byte generalized UTF-8.
    mutating func scanEscape() throws(JSONError) -> (word: UInt64, count: Int) {
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

    /// At a byte >= 0x80: checks one well-formed UTF-8 sequence (no overlongs, no surrogates,
    /// nothing past U+10FFFF), steps over it and returns its length.
    mutating func scanMultibyte() throws(JSONError) -> Int {
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
        position += length
        return length
    }

}

extension ReferenceScanner {
    /// At '-' or a digit: checks RFC 8259's number grammar and hashes the value.
    mutating func scanNumber() throws(JSONError) -> UInt64 {
        let start = position
        let negative = base[position] == 0x2D
        if negative { position += 1 }
        guard position < count, isDigit(base[position]) else { throw JSONError(.invalidNumber, at: position) }
        // Numbers of up to 19 significant digits, by far the most common, take one pass:
        // value = mantissa × 10^(exponent - fractionDigits), mantissa built from all digits.
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var fractionDigits = 0
        if base[position] == 0x30 {
            position += 1
        } else {
            while position < count && isDigit(base[position]) {
                mantissa = mantissa &* 10 &+ UInt64(base[position] &- 0x30)
                significantDigits += 1
                position += 1
            }
        }
        if position < count && base[position] == 0x2E {
            position += 1
            guard position < count, isDigit(base[position]) else { throw JSONError(.invalidNumber, at: position) }
            while position < count && isDigit(base[position]) {
                mantissa = mantissa &* 10 &+ UInt64(base[position] &- 0x30)
                if significantDigits > 0 || base[position] != 0x30 { significantDigits += 1 }
                fractionDigits += 1
                position += 1
            }
        }
        var plainExponent = true
        if position < count && (base[position] | 0x20) == 0x65 {
            plainExponent = false
            position += 1
            if position < count && (base[position] == 0x2B || base[position] == 0x2D) { position += 1 }
            guard position < count, isDigit(base[position]) else { throw JSONError(.invalidNumber, at: position) }
            while position < count && isDigit(base[position]) { position += 1 }
        }
        guard hashing else { return 0 }
        guard plainExponent && significantDigits <= 19 else { return numberHash(start..<position) }
        // 0.d1…dn × 10^E with E = (digits of the mantissa) - fractionDigits; trailing zeros go.
        let exponent = significantDigits - fractionDigits
        while mantissa != 0 && mantissa % 10 == 0 { mantissa /= 10 }
        return ValueHash.number(negative: negative, mantissa: mantissa, exponent: exponent, key: key)
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }


    /// The value of a valid number when it is a whole number that fits in Int64 (whatever its
    /// spelling: 5, 5.0 and 50e-1 are all 5); nil otherwise.
    func exactInteger(_ range: Range<Int>) -> Int64? {
        let parts = numberParts(range)
        guard let significant = parts.significant else { return 0 }
        guard parts.exponent >= parts.digitCount, parts.exponent <= 19 else { return nil }
        var value: Int64 = 0
        var digits = 0
        for offset in significant where base[offset] != 0x2E {
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            // Built negative, so that Int64.min fits.
            let (next, underflow) = times10.subtractingReportingOverflow(Int64(base[offset] - 0x30))
            guard !overflow, !underflow else { return nil }
            value = next
            digits += 1
        }
        for _ in digits..<parts.exponent {
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = times10
        }
        if parts.negative { return value }
        return value == Int64.min ? nil : -value
    }


    /// Unchanged parts are the library's own.
    func numberHash(_ range: Range<Int>) -> UInt64 { library.numberHash(range) }
    func numberParts(_ range: Range<Int>) -> NumberParts { library.numberParts(range) }
    var library: ByteJSON.JSONScanner { ByteJSON.JSONScanner(UnsafeBufferPointer(start: base, count: count)) }
}
