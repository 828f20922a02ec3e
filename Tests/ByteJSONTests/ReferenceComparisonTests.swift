import ByteJSON
import PropertyBased
import Testing

/// The scanner against the one it replaced (`ReferenceScanner`, frozen): on generated texts and
/// on the same texts broken by a few edits, both accept the same, refuse at the same offset for
/// the same reason, and give the same hashes, ranges and ids, however the text is walked.
@Suite struct ReferenceComparisonTests {
    /// Bytes that make texts go wrong in every way the grammar knows.
    static let noise: [UInt8] =
        Array("\"\\{}[],:0123456789-+.eEtrufalsn \t\n\r/u".utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF]

    static func text(_ tape: [Int]) -> [UInt8] {
        var writer = TapeWriter(tape: tape)
        return Array((writer.space() + writer.value(depth: 0) + writer.space()).utf8)
    }

    /// Up to a few deletions, insertions, replacements and truncations, chosen by `edits`.
    static func mutate(_ bytes: [UInt8], _ edits: [Int]) -> [UInt8] {
        var bytes = bytes
        for edit in edits {
            let at = bytes.isEmpty ? 0 : (edit / 4) % bytes.count
            let byte = noise[(edit / 7) % noise.count]
            switch edit % 4 {
            case 0 where !bytes.isEmpty: bytes.remove(at: at)
            case 1: bytes.insert(byte, at: min(at, bytes.count))
            case 2 where !bytes.isEmpty: bytes[at] = byte
            default: bytes.removeLast(bytes.count - at)
            }
        }
        return bytes
    }

    @Test func generatedTextsScanAsBefore() async {
        await propertyCheck(count: 1_500, input: Gen.int(in: 0...1_000).array(of: 1...60), Gen.int(in: 1...8)) { tape, depth in
            Self.compare(Self.text(tape), maxDepth: depth)
        }
    }

    @Test func brokenTextsFailAsBefore() async {
        await propertyCheck(count: 3_000, input: Gen.int(in: 0...1_000).array(of: 1...60), Gen.int(in: 0...100_000).array(of: 1...3)) {
            tape, edits in
            Self.compare(Self.mutate(Self.text(tape), edits), maxDepth: 512)
        }
    }

    /// Arrays of items with ids, long strings and escapes, the reader's usual diet.
    @Test func itemArraysScanAsBefore() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...1_000).array(of: 1...60), Gen.int(in: 0...100_000).array(of: 0...2)) {
            tape, edits in
            var writer = TapeWriter(tape: tape)
            let items = (0..<(tape.count % 7)).map { k in
                let id = k % 3 == 0 ? String(tape[k % tape.count] * 1_000_003) : "\"item \(k) \(writer.string().dropFirst().dropLast())\""
                return "{\"id\":\(id),\"title\":\(writer.string()),\"body\":\(writer.value(depth: 2))}"
            }
            Self.compare(Self.mutate(Array("[\(items.joined(separator: ","))]".utf8), edits), maxDepth: 512)
        }
    }

    @Test func integersReadAsBefore() async {
        let digits = Gen.int(in: 0...9).array(of: 1...22).map { $0.map(String.init).joined() }
        await propertyCheck(count: 2_000, input: Gen.bool, digits, Gen.int(in: 0...3)) { negative, digits, form in
            let trimmed = digits.drop { $0 == "0" }
            let integer = trimmed.isEmpty ? "0" : String(trimmed)
            let text = (negative ? "-" : "") + integer + ["", ".0", "e2", "0e-1"][form]
            // Alone, and with text after it, as in a document.
            for bytes in [Array(text.utf8), Array((text + ",\"next\":[1]}").utf8)] {
                bytes.withUnsafeBufferPointer { buffer in
                    let range = 0..<text.utf8.count
                    #expect(JSONScanner(buffer).exactInteger(range) == ReferenceScanner(buffer).exactInteger(range), "\(text)")
                }
            }
        }
    }

    static func compare(_ bytes: [UInt8], maxDepth: Int) {
        bytes.withUnsafeBufferPointer { buffer in
            let shown = String(decoding: bytes, as: UTF8.self)
            // The whole text, with hashes and without.
            for hashing in [true, false] {
                var ours = JSONScanner(buffer, maxDepth: maxDepth)
                var theirs = ReferenceScanner(buffer, maxDepth: maxDepth)
                ours.hashing = hashing
                theirs.hashing = hashing
                let (a, b) = (
                    Result { () throws(JSONError) in try ours.scanDocument() }, Result { () throws(JSONError) in try theirs.scanDocument() }
                )
                #expect(a == b, "hashing \(hashing): \(shown)")
                #expect(ours.position == theirs.position || a.isFailure, "\(shown)")
            }
            // Walked one member or element at a time, as the collection reader does.
            var ours = JSONScanner(buffer, maxDepth: maxDepth)
            var theirs = ReferenceScanner(buffer, maxDepth: maxDepth)
            #expect(walk(&ours) == walk(&theirs), "walked: \(shown)")
            // Every object found with its members picked out by name, as items are read.
            for name in ["id", "a", "b", "title", "é"] {
                var finder = JSONScanner(buffer, maxDepth: maxDepth)
                var reference = ReferenceScanner(buffer, maxDepth: maxDepth)
                #expect(findEverywhere(name, &finder) == findEverywhere(name, &reference), "finding \(name): \(shown)")
            }
        }
    }

    /// The members of the top object or the elements of the top array, one value each.
    static func walk<S: ScannerLike>(_ scanner: inout S) -> Result<[Step], JSONError> {
        Result { () throws(JSONError) in
            var steps: [Step] = []
            switch scanner.peek() {
            case UInt8(ascii: "{"):
                var key = try scanner.beginObject()
                while let current = key {
                    steps.append(Step(key: current, value: try scanner.scanValue()))
                    key = try scanner.nextKey()
                }
            case UInt8(ascii: "["):
                var more = try scanner.beginArray()
                while more {
                    steps.append(Step(key: nil, value: try scanner.scanValue()))
                    more = try scanner.nextElement()
                }
            default:
                steps.append(Step(key: nil, value: try scanner.scanValue()))
            }
            scanner.skipWhitespace()
            return steps
        }
    }

    /// For the top value and, in a top array, each element: its hash and range, the first member
    /// called `name` and whether the name repeats.
    static func findEverywhere<S: ScannerLike>(_ name: String, _ scanner: inout S) -> Result<[Found], JSONError> {
        Result { () throws(JSONError) in
            var found: [Found] = []
            let start = scanner.position
            found.append(try scanner.find(name))
            scanner.position = start
            if scanner.peek() == UInt8(ascii: "[") {
                var more = try scanner.beginArray()
                while more {
                    found.append(try scanner.find(name))
                    more = try scanner.nextElement()
                }
            }
            return found
        }
    }
}

struct Step: Equatable {
    var key: ScannedString?
    var value: ScannedValue
}

struct Found: Equatable {
    var value: ScannedValue
    var member: ScannedValue?
    var repeated: Bool
}

/// The walking calls both scanners share.
protocol ScannerLike {
    var position: Int { get set }
    mutating func peek() -> UInt8?
    mutating func skipWhitespace()
    mutating func scanValue() throws(JSONError) -> ScannedValue
    mutating func beginObject() throws(JSONError) -> ScannedString?
    mutating func nextKey() throws(JSONError) -> ScannedString?
    mutating func beginArray() throws(JSONError) -> Bool
    mutating func nextElement() throws(JSONError) -> Bool
    /// The value at the cursor, with the first member called `name` where it is an object.
    mutating func find(_ name: String) throws(JSONError) -> Found
}

extension JSONScanner: ScannerLike {
    mutating func find(_ name: String) throws(JSONError) -> Found {
        let (value, member, repeated) = try scanValue(findingMember: JSONName(name))
        return Found(value: value, member: member, repeated: repeated)
    }
}

extension ReferenceScanner: ScannerLike {
    /// The way items were read before: member by member, comparing each key.
    mutating func find(_ name: String) throws(JSONError) -> Found {
        skipWhitespace()
        let start = position
        guard peek() == UInt8(ascii: "{") else { return Found(value: try scanValue(), member: nil, repeated: false) }
        var whole = self
        let value = try whole.scanValue()
        var member: ScannedValue?
        var repeated = false
        var key = try beginObject()
        while let current = key {
            let memberValue = try scanValue()
            if string(current, equals: Array(name.utf8)) {
                if member == nil { member = memberValue } else { repeated = true }
            }
            key = try nextKey()
        }
        precondition(position == whole.position && value.start == start)
        return Found(value: value, member: member, repeated: repeated)
    }
}

extension Result {
    var isFailure: Bool {
        if case .failure = self { true } else { false }
    }
}
