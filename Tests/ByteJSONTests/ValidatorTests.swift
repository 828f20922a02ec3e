import ByteJSON
import PropertyBased
import Testing

/// `JSONValidator` answers yes exactly where the scanner reads the whole text without error:
/// on generated texts, on the same texts broken by a few edits, on every prefix of a text, and
/// on long strings whose escapes, non-ASCII and faults fall past its byte-at-a-time start.
@Suite struct ValidatorTests {
    static func scannerAccepts(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Bool {
        var scanner = JSONScanner(buffer, maxDepth: maxDepth)
        scanner.hashing = false
        do {
            _ = try scanner.scanDocument()
            return true
        } catch {
            return false
        }
    }

    static func agree(_ bytes: [UInt8], maxDepth: Int = 512, sourceLocation: SourceLocation = #_sourceLocation) {
        bytes.withUnsafeBufferPointer { buffer in
            #expect(
                JSONValidator.accepts(buffer, maxDepth: maxDepth) == scannerAccepts(buffer, maxDepth: maxDepth),
                "maxDepth \(maxDepth): \(String(decoding: bytes, as: UTF8.self).debugDescription)", sourceLocation: sourceLocation)
        }
    }

    @Test func generatedTextsAreAcceptedAsTheScannerDoes() async {
        await propertyCheck(count: 1_500, input: Gen.int(in: 0...1_000).array(of: 1...60), Gen.int(in: 0...8)) { tape, depth in
            Self.agree(ReferenceComparisonTests.text(tape), maxDepth: depth)
        }
    }

    @Test func brokenTextsAreRefusedAsTheScannerDoes() async {
        await propertyCheck(count: 4_000, input: Gen.int(in: 0...1_000).array(of: 1...60), Gen.int(in: 0...100_000).array(of: 1...3)) {
            tape, edits in
            Self.agree(ReferenceComparisonTests.mutate(ReferenceComparisonTests.text(tape), edits))
        }
    }

    /// Every prefix ends the text somewhere new: inside a literal, a number, an escape, a
    /// multibyte character, between tokens.
    @Test func everyPrefixIsJudgedAsTheScannerJudgesIt() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...1_000).array(of: 1...60)) { tape in
            let text = ReferenceComparisonTests.text(tape)
            for end in 0...text.count { Self.agree(Array(text[..<end])) }
        }
    }

    /// Strings of up to a few hundred bytes, built from pieces that need a look (escapes,
    /// multibyte characters, faults), then broken by a few edits.
    @Test func longStringsAreJudgedAsTheScannerJudgesThem() async {
        let pieces = [
            "plain words ", "x", "\\\"", "\\\\", "\\n", "\\u00e9", "\\uD83D\\uDE00", "\\ud800", "é", "😀", "€", "\u{7F}", "0123456789abcdef",
        ]
        let bad: [[UInt8]] = [
            [0x01], [0x1F], [0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x5C, 0x78],
            [0x5C, 0x75, 0x31, 0x32, 0x67],
        ]
        let input = Gen.int(in: 0...1_000).array(of: 1...80)
        await propertyCheck(count: 2_000, input: input, Gen.int(in: 0...100_000).array(of: 0...2)) { tape, edits in
            var bytes: [UInt8] = Array("{\"id\":1,\"text\":\"".utf8)
            for (k, choice) in tape.enumerated() {
                if k == tape.count - 1 && choice % 5 == 0 {
                    bytes += bad[choice % bad.count]
                } else {
                    bytes += Array(pieces[choice % pieces.count].utf8)
                }
            }
            bytes += Array("\",\"n\":[true,false,null,-0.5e+3]}".utf8)
            Self.agree(ReferenceComparisonTests.mutate(bytes, edits))
        }
    }

    /// A string's first 16 bytes are judged at once: each kind of byte that ends a plain run,
    /// at every place in strings of every length around that step, is judged as the scanner
    /// judges it, with the text ending right after the string and with room after it.
    @Test func everyByteThatEndsAPlainRunIsJudgedWhereverItStands() {
        let breakers: [[UInt8]] = [[0x22], [0x5C, 0x6E], [0x5C, 0x78], [0x00], [0x1F], [0x7F], [0x80], [0xC3, 0xA9], [0xC3], [0xFF]]
        for length in 0...40 {
            for place in 0...length {
                for breaker in breakers {
                    var string: [UInt8] = [0x22] + Array(repeating: 0x61, count: length) + [0x22]
                    string.replaceSubrange((1 + place)..<(1 + place), with: breaker)
                    Self.agree(string)
                    Self.agree(Array("[".utf8) + string + Array(",\"padding to spare\"]".utf8))
                }
            }
        }
    }

    @Test(arguments: [
        "", " ", "t", "tru", "true", "truE", "fals", "false", "falsE", "nul", "null", "nulll", "-", "-0", "01", "1.", "1.e3", "1e", "1e+",
        "[1,]", "{\"a\"}", "{\"a\":}", "{,}", "[", "]", "\"\\u12\"", "\"\\u12G4\"", "\"\\uABCD\"", "[1]x", "[1] \n", "{\"a\":1 , \"b\" : [ ] }",
    ])
    func smallTextsAreJudgedAsTheScannerJudgesThem(_ text: String) {
        Self.agree(Array(text.utf8))
        Self.agree(Array(text.utf8), maxDepth: 0)
    }

    /// The depth limit counts open containers exactly as the scanner's does.
    @Test func depthIsBoundedAsTheScannerBoundsIt() {
        for limit in [0, 1, 2, 31, 32, 33, 64, 512] {
            for depth in [limit - 1, limit, limit + 1] where depth >= 0 {
                Self.agree(Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8), maxDepth: limit)
                Self.agree(Array((String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)).utf8), maxDepth: limit)
            }
        }
    }
}
