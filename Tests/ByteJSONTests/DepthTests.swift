import ByteJSON
import Testing

/// `maxDepth` bounds the whole text, however it is walked: whole values, one level at a time,
/// or as a tree (which recurses, so an unbounded tree could overflow the stack).
@Suite struct DepthTests {
    static func depthError(_ text: String, maxDepth: Int, _ walk: (inout JSONScanner) throws(JSONError) -> Void) -> JSONError? {
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            var scanner = JSONScanner(bytes, maxDepth: maxDepth)
            do throws(JSONError) {
                try walk(&scanner)
                return nil
            } catch {
                return error
            }
        }
    }

    static func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }

    @Test(arguments: [1, 2, 10, 512])
    func exactlyTheLimitIsAccepted(_ limit: Int) {
        #expect(Self.depthError(Self.nested(limit), maxDepth: limit) { scanner throws(JSONError) in _ = try scanner.scanDocument() } == nil)
        let deeper = Self.depthError(Self.nested(limit + 1), maxDepth: limit) { scanner throws(JSONError) in _ = try scanner.scanDocument() }
        #expect(deeper?.reason == .tooDeep(limit: limit))
    }

    /// Containers entered one level at a time count towards the limit of what is inside them.
    @Test func levelsEnteredByHandCount() {
        let text = "{\"a\":[" + Self.nested(8) + "]}"
        let walk = { (scanner: inout JSONScanner) throws(JSONError) in
            _ = try scanner.beginObject()
            _ = try scanner.beginArray()
            _ = try scanner.scanValue()
        }
        #expect(Self.depthError(text, maxDepth: 10, walk) == nil)
        #expect(Self.depthError(text, maxDepth: 9, walk)?.reason == .tooDeep(limit: 9))
    }

    /// A tree built from unvalidated text stops at the limit instead of recursing on: 100,000
    /// levels would overflow any thread's stack.
    @Test(arguments: ["[", "{\"a\":"])
    func treesStopAtTheLimit(_ opener: String) {
        let text = String(repeating: opener, count: 100_000)
        let error = Self.depthError(text, maxDepth: 512) { scanner throws(JSONError) in _ = try scanner.buildValue(keeping: nil) }
        #expect(error?.reason == .tooDeep(limit: 512))
        #expect(throws: JSONError.self) { try JSONValue(parsing: text) }
    }
}
