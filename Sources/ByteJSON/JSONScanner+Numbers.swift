/// A number reduced to its value: `0.d1d2…dn × 10^exponent` with no leading or trailing zero
/// digits, so that 1, 1.0, 10e-1 and 0.1e1 are the same. Zero has no digits and no sign.
public struct CanonicalNumber: Hashable, Sendable, CustomStringConvertible {
    /// Whether the value is below zero.
    public var negative: Bool
    /// The significant decimal digits as ASCII, without leading or trailing zeros.
    public var digits: [UInt8]
    /// The power of ten that the digits, read as `0.digits`, are scaled by.
    public var exponent: Int

    package init(negative: Bool, digits: [UInt8], exponent: Int) {
        self.negative = negative
        self.digits = digits
        self.exponent = exponent
    }

    /// JSON number text that spells the value one way only (`-0.15e3`).
    package var bytes: [UInt8] {
        guard !digits.isEmpty else { return [0x30] }
        return Array((negative ? "-0." : "0.").utf8) + digits + Array("e\(exponent)".utf8)
    }

    /// The value as people write it: 1, 12.5, 0.001, 1.5e+30. Every value has a description,
    /// whatever its digit count or exponent: whole numbers are written out up to 21 digits,
    /// decimals with the point inside the digits as they are, small values with up to five
    /// leading zeros, and anything else in exponent form.
    public var description: String {
        guard !digits.isEmpty else { return "0" }
        let text = String(decoding: digits, as: UTF8.self)
        let sign = negative ? "-" : ""
        let count = digits.count
        if exponent >= count && exponent <= 21 { return sign + text + String(repeating: "0", count: exponent - count) }
        if exponent >= 1 && exponent < count { return sign + text.prefix(exponent) + "." + text.dropFirst(exponent) }
        if exponent >= -5 && exponent <= 0 { return sign + "0." + String(repeating: "0", count: -exponent) + text }
        let shown = exponent - 1
        return sign + text.prefix(1) + (count > 1 ? "." + text.dropFirst() : "") + "e" + (shown >= 0 ? "+" : "") + String(shown)
    }
}

/// Where a number's significant digits stand in the text.
struct NumberParts {
    var negative: Bool
    /// Offset of the first and last non-zero digit (the decimal point may lie between), or nil
    /// for zero.
    var significant: ClosedRange<Int>?
    var exponent: Int
    /// How many significant digits.
    var digitCount: Int
}

extension JSONScanner {
    /// Canonical exponents are kept within ±10^15: values beyond that are out of any use, and
    /// two such numbers that differ only there compare equal. The bound applies to the value's
    /// exponent, not to the one written, so that a value's description reads back as itself.
    static let exponentLimit = 1_000_000_000_000_000

    /// At '-' or a digit: checks RFC 8259's number grammar and hashes the value.
    mutating func scanNumber() throws(JSONError) -> UInt64 {
        // Locals, not properties, in the loops: stored back once, they stay in registers
        // (a property would be written to memory at every digit).
        let base = self.base, count = self.count
        let start = position
        var position = start
        defer { self.position = position }
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
                significantDigits &+= 1
                position += 1
            }
        }
        if position < count && base[position] == 0x2E {
            position += 1
            guard position < count, isDigit(base[position]) else { throw JSONError(.invalidNumber, at: position) }
            while position < count && isDigit(base[position]) {
                mantissa = mantissa &* 10 &+ UInt64(base[position] &- 0x30)
                if significantDigits > 0 || base[position] != 0x30 { significantDigits &+= 1 }
                fractionDigits &+= 1
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

    /// At '-' or a digit: any number, the common ones read inline (`scanPlainNumber`), the rest
    /// by `scanNumber`.
    @inline(__always)
    mutating func scanAnyNumber() throws(JSONError) -> UInt64 {
        if let hash = scanPlainNumber() { return hash }
        return try scanNumber()
    }

    /// The common number, read where it stands in the value loop rather than by a call:
    /// `scanNumber`'s result for a number with no sign, no leading zero and no exponent, of up
    /// to 19 digits; nil, with the cursor unmoved, for anything else (`scanNumber` then reads
    /// it, and finds any error). At a digit or '-'.
    @inline(__always)
    mutating func scanPlainNumber() -> UInt64? {
        let base = self.base, count = self.count
        var position = self.position
        guard base[position] &- 0x31 < 9 else { return nil }
        var mantissa: UInt64 = 0
        repeat {
            mantissa = mantissa &* 10 &+ UInt64(base[position] &- 0x30)
            position += 1
        } while position < count && isDigit(base[position])
        let wholeDigits = position - self.position
        if position < count && base[position] == 0x2E {
            position += 1
            guard position < count && isDigit(base[position]) else { return nil }
            repeat {
                mantissa = mantissa &* 10 &+ UInt64(base[position] &- 0x30)
                position += 1
            } while position < count && isDigit(base[position])
        }
        // All digits are significant (the first is not zero); a point is one byte more.
        let length = position - self.position
        guard (length == wholeDigits ? length : length - 1) <= 19 else { return nil }
        if position < count && base[position] | 0x20 == 0x65 { return nil }
        self.position = position
        guard hashing else { return 0 }
        // 0.d1…dn × 10^E, E the count of whole digits, trailing zeros gone.
        while mantissa % 10 == 0 { mantissa /= 10 }
        return ValueHash.number(negative: false, mantissa: mantissa, exponent: wholeDigits, key: key)
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

    /// The hash of any valid number: by mantissa where its digits fit in 64 bits, else by its
    /// digits (such a value has no shorter spelling, so the two kinds never meet).
    func numberHash(_ range: Range<Int>) -> UInt64 {
        let parts = numberParts(range)
        guard let significant = parts.significant else { return ValueHash.number(negative: false, mantissa: 0, exponent: 0, key: key) }
        if parts.digitCount <= 19 {
            var mantissa: UInt64 = 0
            for offset in significant where base[offset] != 0x2E { mantissa = mantissa &* 10 &+ UInt64(base[offset] &- 0x30) }
            return ValueHash.number(negative: parts.negative, mantissa: mantissa, exponent: parts.exponent, key: key)
        }
        var hasher = StreamHasher(seed: ValueHash.numberTag ^ (parts.negative ? 1 : 0), key: key)
        for offset in significant where base[offset] != 0x2E { hasher.feed(byte: base[offset]) }
        return ValueHash.mix(hasher.finish(), UInt64(bitPattern: Int64(parts.exponent)))
    }

    /// Splits a valid number's text into sign, significant digits and exponent.
    func numberParts(_ range: Range<Int>) -> NumberParts {
        var offset = range.lowerBound
        let negative = base[offset] == 0x2D
        if negative { offset += 1 }
        var mantissaEnd = offset
        while mantissaEnd < range.upperBound && (base[mantissaEnd] | 0x20) != 0x65 { mantissaEnd += 1 }
        var exponent = 0
        if mantissaEnd < range.upperBound {
            var k = mantissaEnd + 1
            let negativeExponent = base[k] == 0x2D
            if base[k] == 0x2B || base[k] == 0x2D { k += 1 }
            // Written exponents are bounded at twice the canonical bound, so that the sum below
            // cannot overflow and a description's exponent (one below the canonical) survives.
            while k < range.upperBound {
                exponent = min(exponent * 10 + Int(base[k] - 0x30), 2 * Self.exponentLimit)
                k += 1
            }
            if negativeExponent { exponent = -exponent }
        }
        // Digits before the decimal point, and where the first and last non-zero digits are.
        var integerDigits = 0
        var seenPoint = false
        var digitIndex = 0
        var first: (offset: Int, index: Int)?
        var last: (offset: Int, index: Int)?
        for k in offset..<mantissaEnd {
            let byte = base[k]
            if byte == 0x2E {
                seenPoint = true
                continue
            }
            if !seenPoint { integerDigits += 1 }
            if byte != 0x30 {
                if first == nil { first = (k, digitIndex) }
                last = (k, digitIndex)
            }
            digitIndex += 1
        }
        guard let first, let last else { return NumberParts(negative: false, significant: nil, exponent: 0, digitCount: 0) }
        return NumberParts(
            negative: negative, significant: first.offset...last.offset,
            exponent: max(-Self.exponentLimit, min(Self.exponentLimit, integerDigits - first.index + exponent)),
            digitCount: last.index - first.index + 1)
    }

    /// The canonical value of a valid number's text.
    package func canonicalNumber(_ range: Range<Int>) -> CanonicalNumber {
        let parts = numberParts(range)
        guard let significant = parts.significant else { return CanonicalNumber(negative: false, digits: [], exponent: 0) }
        let digits = significant.map { base[$0] }.filter { $0 != 0x2E }
        return CanonicalNumber(negative: parts.negative, digits: digits, exponent: parts.exponent)
    }

    /// Appends bytes that identify a valid number's value (equal values, equal bytes) without
    /// building anything on the way: a sign byte, the exponent, then the significant digits.
    package func appendNumberIdentity(_ range: Range<Int>, to bytes: inout [UInt8]) {
        let parts = numberParts(range)
        bytes.append(parts.negative ? 0x2D : 0x2B)
        withUnsafeBytes(of: Int64(parts.exponent).littleEndian) { bytes.append(contentsOf: $0) }
        guard let significant = parts.significant else { return }
        for offset in significant where base[offset] != 0x2E { bytes.append(base[offset]) }
    }

    /// The value of a valid number when it is a whole number that fits in Int64 (whatever its
    /// spelling: 5, 5.0 and 50e-1 are all 5); nil otherwise.
    @inlinable @inline(__always)
    package func exactInteger(_ range: Range<Int>) -> Int64? {
        eightDigits(range) ?? longerInteger(range)
    }

    /// `exactInteger` past `eightDigits`.
    @usableFromInline
    func longerInteger(_ range: Range<Int>) -> Int64? {
        // Plain integers (the usual ids) directly: a valid number of digits alone has no
        // leading zero, and 18 digits cannot overflow.
        let negative = base[range.lowerBound] == 0x2D
        if range.count - (negative ? 1 : 0) <= 18 {
            var value: Int64 = 0
            var plain = true
            for offset in (range.lowerBound + (negative ? 1 : 0))..<range.upperBound {
                let digit = base[offset] &- 0x30
                if digit >= 10 {
                    plain = false
                    break
                }
                value = value &* 10 &+ Int64(digit)
            }
            if plain { return negative ? -value : value }
        }
        return exactIntegerByParts(range)
    }

    /// The value of a valid number of 1 to 8 digits and nothing else, read as one word (where
    /// the text has 8 bytes from its start); nil for any other valid number.
    @inlinable @inline(__always)
    func eightDigits(_ range: Range<Int>) -> Int64? {
        let length = range.count
        guard length >= 1, length <= 8, range.lowerBound + 8 <= count else { return nil }
        let word = UnsafeRawPointer(base + range.lowerBound).loadUnaligned(as: UInt64.self)
        // The digits move to the high bytes (the last digit highest); '0's fill in before them.
        let zeros: UInt64 = 0x3030_3030_3030_3030
        let padded = length == 8 ? word : word << UInt64(8 * (8 - length)) | zeros >> UInt64(8 * length)
        // All digits: in a valid number the other bytes ('-', '+', '.', 'e', 'E') are the ones
        // whose high nibble is not 3.
        guard padded & 0xF0F0_F0F0_F0F0_F0F0 == zeros else { return nil }
        // Pairs, then fours, then all eight digits, each step by one multiplication.
        var value = padded & 0x0F0F_0F0F_0F0F_0F0F
        value = (value &* 2561) >> 8
        value = ((value & 0x00FF_00FF_00FF_00FF) &* 6_553_601) >> 16
        value = ((value & 0x0000_FFFF_0000_FFFF) &* 42_949_672_960_001) >> 32
        return Int64(value & 0xFFFF_FFFF)
    }

    /// `exactInteger` for any spelling, through the number's parts.
    @usableFromInline
    func exactIntegerByParts(_ range: Range<Int>) -> Int64? {
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

    /// The value of bytes made by `appendNumberIdentity`.
    package static func number(fromIdentity bytes: UnsafeBufferPointer<UInt8>) -> CanonicalNumber {
        guard bytes.count >= 9 else { return CanonicalNumber(negative: false, digits: [], exponent: 0) }
        let exponent = UnsafeRawPointer(bytes.baseAddress! + 1).loadUnaligned(as: Int64.self).littleEndian
        return CanonicalNumber(negative: bytes[0] == 0x2D, digits: Array(bytes[9...]), exponent: Int(exponent))
    }
}
