import PropertyBased
import Testing

@testable import ByteJSON

/// `scanPlainNumber`, the value loop's inline reading of common numbers, gives what
/// `scanNumber` gives wherever it answers (the same hash and end, hashing or not), and leaves
/// the cursor where it was wherever it does not.
@Suite struct PlainNumberTests {
    /// Results of both readers at the start of `text`: (hash, end) or nil.
    static func read(_ text: String, hashing: Bool) -> (plain: (UInt64, Int)?, full: (UInt64, Int)?, unmoved: Bool) {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            var plain = JSONScanner(buffer)
            plain.hashing = hashing
            let quick = plain.scanPlainNumber().map { ($0, plain.position) }
            var full = JSONScanner(buffer)
            full.hashing = hashing
            let slow = (try? full.scanNumber()).map { ($0, full.position) }
            return (quick, slow, quick != nil || plain.position == 0)
        }
    }

    @Test(arguments: ["1990,", "4.5}", "12345]", "7 ", "10.50,", "1234567890123456789]", "9.9"])
    func commonShapesAreReadInline(_ text: String) {
        let result = Self.read(text, hashing: true)
        #expect(result.plain != nil, "\(text)")
        #expect(result.plain?.0 == result.full?.0 && result.plain?.1 == result.full?.1, "\(text)")
    }

    @Test(arguments: ["0", "0.5,", "-1,", "1e5,", "1.5E2]", "01,", "1.,", "1.x", "12345678901234567890,", "1234567890.1234567890]"])
    func otherShapesAreLeftToScanNumber(_ text: String) {
        let result = Self.read(text, hashing: true)
        #expect(result.plain == nil, "\(text)")
        #expect(result.unmoved, "\(text)")
    }

    @Test func agreesWithScanNumberWhereverItAnswers() async {
        let digits = Gen.int(in: 0...9).array(of: 0...22).map { $0.map(String.init).joined() }
        let tails = [",", "]", "}", " ", "", "x", ".", "e", "E", "0", ".5", "e+1", "-", "\n,1"]
        await propertyCheck(count: 3_000, input: Gen.int(in: 1...9), digits, Gen.int(in: 0...3), digits, Gen.int(in: 0...tails.count - 1), Gen.bool) {
            lead, whole, shape, fraction, tail, hashing in
            // A first digit of 1-9, or a zero that may be followed by more (not JSON).
            var text = (shape == 3 ? "0" : String(lead)) + whole
            if shape >= 1 { text += "." + fraction }
            if shape == 2 { text += "e" + fraction.prefix(3) }
            text += tails[tail]
            let result = Self.read(text, hashing: hashing)
            #expect(result.unmoved, "\(text)")
            if let plain = result.plain {
                #expect(result.full?.0 == plain.0 && result.full?.1 == plain.1, "\(text)")
            }
        }
    }
}
