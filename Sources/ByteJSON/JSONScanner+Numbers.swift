/// A number reduced to its value: `0.d1d2…dn × 10^exponent` with no leading or trailing zero
/// digits, so that 1, 1.0, 10e-1 and 0.1e1 are the same. Zero has no digits and no sign.
public struct CanonicalNumber: Hashable, Sendable {
    public var negative: Bool
    public var digits: [UInt8]
    public var exponent: Int

    public init(negative: Bool, digits: [UInt8], exponent: Int) {
        self.negative = negative
        self.digits = digits
        self.exponent = exponent
    }

    /// JSON number text that spells the value one way only (`-0.15e3`), for use as an identity.
    public var bytes: [UInt8] {
        guard !digits.isEmpty else { return [0x30] }
        return Array((negative ? "-0." : "0.").utf8) + digits + Array("e\(exponent)".utf8)
    }
}

/// Where a number's significant digits stand in the text.
struct NumberParts {
    var negative: Bool
    /// Offset of the first and last non-zero digit (the decimal point may lie between), or nil
    /// for zero.
    var significant: ClosedRange<Int>?
    var exponent: Int
}

extension JSONScanner {
    /// Exponents are kept within ±10^15: values beyond that are out of any use, and two such
    /// numbers that differ only there compare equal.
    static let exponentLimit = 1_000_000_000_000_000

    /// At '-' or a digit: checks RFC 8259's number grammar and hashes the value.
    mutating func scanNumber() throws(JSONError) -> UInt64 {
        let start = position
        if base[position] == 0x2D { position += 1 }
        guard position < count, isDigit(base[position]) else { throw JSONError(.invalidNumber, at: position) }
        if base[position] == 0x30 {
            position += 1
        } else {
            while position < count && isDigit(base[position]) { position += 1 }
        }
        if position < count && base[position] == 0x2E {
            position += 1
            guard position < count, isDigit(base[position]) else { throw JSONError(.invalidNumber, at: position) }
            while position < count && isDigit(base[position]) { position += 1 }
        }
        if position < count && (base[position] | 0x20) == 0x65 {
            position += 1
            if position < count && (base[position] == 0x2B || base[position] == 0x2D) { position += 1 }
            guard position < count, isDigit(base[position]) else { throw JSONError(.invalidNumber, at: position) }
            while position < count && isDigit(base[position]) { position += 1 }
        }
        let parts = numberParts(start..<position)
        guard let significant = parts.significant else { return ValueHash.mix(ValueHash.numberTag, 0) }
        var hasher = StreamHasher(seed: ValueHash.numberTag ^ (parts.negative ? 1 : 0))
        for offset in significant where base[offset] != 0x2E { hasher.feed(byte: base[offset]) }
        return ValueHash.mix(hasher.finish(), UInt64(bitPattern: Int64(parts.exponent)))
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

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
            while k < range.upperBound {
                exponent = min(exponent * 10 + Int(base[k] - 0x30), Self.exponentLimit)
                k += 1
            }
            if negativeExponent { exponent = -exponent }
        }
        // Digits before the decimal point, and where the first and last non-zero digits are.
        var integerDigits = 0
        var seenPoint = false
        var digitIndex = 0
        var first: (offset: Int, index: Int)?
        var last: Int?
        for k in offset..<mantissaEnd {
            let byte = base[k]
            if byte == 0x2E {
                seenPoint = true
                continue
            }
            if !seenPoint { integerDigits += 1 }
            if byte != 0x30 {
                if first == nil { first = (k, digitIndex) }
                last = k
            }
            digitIndex += 1
        }
        guard let first, let last else { return NumberParts(negative: false, significant: nil, exponent: 0) }
        return NumberParts(negative: negative, significant: first.offset...last, exponent: integerDigits - first.index + exponent)
    }

    /// The canonical value of a valid number's text.
    public func canonicalNumber(_ range: Range<Int>) -> CanonicalNumber {
        let parts = numberParts(range)
        guard let significant = parts.significant else { return CanonicalNumber(negative: false, digits: [], exponent: 0) }
        let digits = significant.map { base[$0] }.filter { $0 != 0x2E }
        return CanonicalNumber(negative: parts.negative, digits: digits, exponent: parts.exponent)
    }
}
