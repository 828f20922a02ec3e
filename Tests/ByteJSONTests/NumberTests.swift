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

    /// A number's hash is its value's, however it is spelled and wherever it stands: eight
    /// digits are read at a time where eight bytes follow, byte by byte near the end of the
    /// text, and both must agree with each other and with the value.
    @Test func hashesFollowValuesWhereverTheNumberStands() async {
        let digits = Gen.int(in: 0...9).array(of: 1...21).map { $0.map(String.init).joined() }
        await propertyCheck(count: 3_000, input: Gen.bool, digits, digits, Gen.int(in: 0...2), Gen.int(in: -30...30)) {
            negative, whole, fraction, shape, exponent in
            var text = (negative ? "-" : "") + (whole.drop { $0 == "0" }.isEmpty ? "0" : String(whole.drop { $0 == "0" }))
            if shape >= 1 { text += "." + fraction }
            if shape == 2 { text += "e\(exponent)" }
            let value = try Self.canonical(text)
            // The same value spelled its canonical way, and the text followed by more bytes.
            let spellings = [text, String(decoding: value.bytes, as: UTF8.self), value.description]
            let hashes = try spellings.flatMap { spelling in
                try ["", "]", ",  1234567890"].map { tail in try Self.hash(of: spelling, followedBy: tail) }
            }
            #expect(Set(hashes).count == 1, "\(text): \(spellings)")
        }
    }

    /// The hash of the number that starts `text + tail`, read as the first element of an array.
    static func hash(of text: String, followedBy tail: String) throws -> UInt64 {
        let bytes = Array(("[" + text + tail + (tail.isEmpty ? "]" : tail.hasPrefix("]") ? "" : "]")).utf8)
        return try bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            guard try scanner.beginArray() else { throw JSONError(.invalidNumber, at: 0) }
            return try scanner.scanValue().hash
        }
    }
}
