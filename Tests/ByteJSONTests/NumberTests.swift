import ByteJSON
import PropertyBased
import Testing

/// Every number's canonical value can be described, and the description reads back as the
/// same value (the path every error message that names a numeric id takes).
@Suite struct NumberTests {
    static func canonical(_ text: String) throws -> CanonicalNumber {
        guard case .number(let number) = try JSONValue(parsing: text) else { throw JSONError(.invalidNumber, at: 0) }
        return number
    }

    /// The inputs that trapped: 22 or more significant digits, in every shape.
    @Test(arguments: [
        "1234567890123456789012", String(repeating: "9", count: 400), "1.0000000000000000000001", "-1234567890123456789012",
        "1234567890123456789012e5", "1234567890123456789012e-40", "0.00000000000000000000000000001234567890123456789012",
        "123456789012345678901.2", "1e21", "1e22", "-1e-7", "1e-6", "1e1000000000000000000000",
        // Found by the fuzzer: the exponent bound applied to the written exponent only.
        "11e1666666666666666665", "-0.0000011e-1666666666666666665", "123e999999999999999",
    ])
    func longNumbersAreDescribedAndReadBack(_ text: String) throws {
        let number = try Self.canonical(text)
        #expect(try Self.canonical(number.description) == number, "\(text) -> \(number.description)")
    }

    /// text → canonical value → description → canonical value, over generated spellings:
    /// signs, leading and trailing zeros, fractions, exponents of any size and sign.
    @Test func descriptionsReadBackAsTheSameValue() async {
        let digits = Gen.int(in: 0...9).array(of: 1...60).map { $0.map(String.init).joined() }
        let exponent = Gen.int(in: -40...40)
        await propertyCheck(count: 2_000, input: Gen.bool, digits, Gen.int(in: 0...70), exponent, Gen.bool) {
            negative, mantissa, point, exponent, hasExponent in
            var text = (negative ? "-" : "") + mantissa
            // A leading zero is JSON only alone before the point.
            while text.hasPrefix("0") && text.count > 1 && !text.hasPrefix("0.") { text.removeFirst() }
            while text.hasPrefix("-0") && text.count > 2 { text.remove(at: text.index(after: text.startIndex)) }
            if point > 0 && point < mantissa.count { text += "." + mantissa.suffix(point) }
            if hasExponent { text += "e\(exponent)" }
            let number = try Self.canonical(text)
            #expect(try Self.canonical(number.description) == number, "\(text) -> \(number.description)")
        }
    }
}
