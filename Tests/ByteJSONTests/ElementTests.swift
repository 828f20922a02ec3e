import ByteJSON
import PropertyBased
import Testing

/// `scanElements` reads an array as `beginArray`, `scanValue(findingMember:)` (or `scanValue()`
/// for an element that is not an object) and `nextElement` read it element by element: the same
/// elements, members and repeats, the same error at the same offset, the same unfinished
/// element when the error comes inside one, and it stops where its caller says.
@Suite struct ElementTests {
    /// What reading an array gave: the elements, then the error and the element it came in
    /// (or the position after the array).
    struct Outcome: Equatable, CustomStringConvertible {
        var elements: [ScannedElement] = []
        var error: JSONError?
        var unfinished: Int?
        var end: Int?

        var description: String {
            "\(elements.count) elements \(elements.map { "\($0.value.start)..<\($0.value.end) \($0.value.kind) member \($0.member.map { "\($0.start)..<\($0.end)" } ?? "none")\($0.repeated ? " repeated" : "")" }), error \(error.map(String.init(describing:)) ?? "none"), unfinished \(unfinished.map(String.init) ?? "none"), end \(end.map(String.init) ?? "none")"
        }
    }

    static let name = JSONName("id")

    /// Element by element, with the scanner's one-level steps.
    static func stepByStep(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Outcome {
        var scanner = JSONScanner(buffer, maxDepth: maxDepth)
        var outcome = Outcome()
        do {
            var more = try scanner.beginArray()
            while more {
                scanner.skipWhitespace()
                outcome.unfinished = scanner.position
                if scanner.position < buffer.count && buffer[scanner.position] == UInt8(ascii: "{") {
                    let (value, member, repeated) = try scanner.scanValue(findingMember: name)
                    outcome.elements.append(ScannedElement(value: value, member: member, repeated: repeated))
                } else {
                    outcome.elements.append(ScannedElement(value: try scanner.scanValue(), member: nil, repeated: false))
                }
                outcome.unfinished = nil
                more = try scanner.nextElement()
            }
            outcome.end = scanner.position
        } catch {
            outcome.error = error
        }
        return outcome
    }

    /// In one walk, batch by batch; `stopAfter` elements, the caller stops it.
    static func walked(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int, batch: Int, stopAfter: Int = .max) -> (Outcome, completed: Bool?) {
        var scanner = JSONScanner(buffer, maxDepth: maxDepth)
        var outcome = Outcome()
        var completed: Bool?
        do {
            completed = try scanner.scanElements(findingMember: name, batch: batch) { elements, unfinished in
                #expect(elements.count <= batch)
                for element in elements {
                    guard outcome.elements.count < stopAfter else { return false }
                    outcome.elements.append(element)
                }
                outcome.unfinished = unfinished
                return true
            }
            if completed == true { outcome.end = scanner.position }
        } catch {
            outcome.error = error
        }
        return (outcome, completed)
    }

    static func agree(_ bytes: [UInt8], maxDepth: Int = 512, batch: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        bytes.withUnsafeBufferPointer { buffer in
            let expected = stepByStep(buffer, maxDepth: maxDepth)
            let (outcome, completed) = walked(buffer, maxDepth: maxDepth, batch: batch)
            #expect(outcome == expected, "batch \(batch): \(String(decoding: bytes, as: UTF8.self).debugDescription)", sourceLocation: sourceLocation)
            #expect(completed == (expected.error == nil ? true : nil), sourceLocation: sourceLocation)
        }
    }

    /// Arrays of objects with and without ids (some twice, some nested), scalars and arrays,
    /// with whitespace around everything.
    static func array(_ tape: [Int]) -> [UInt8] {
        var writer = TapeWriter(tape: tape)
        let elements = (0..<(tape.count % 9)).map { k -> String in
            let s = writer.space()
            switch writer.next(6) {
            case 0: return "\(s){\(s)\"id\"\(s):\(s)\(writer.value(depth: 3))\(s),\"title\":\(writer.string())}\(s)"
            case 1: return "{\"title\":\(writer.string()),\"id\":\(writer.number()),\"id\":\(writer.value(depth: 3))}"
            case 2: return "{\"x\":{\"id\":\(writer.number())},\"\\u0069d\":\(writer.string())}"
            case 3: return "\(s)\(writer.value(depth: 1))\(s)"
            case 4: return "[\(writer.value(depth: 2)),{\"id\":\(k)}]"
            default: return "{\"id\":\(k),\"tags\":[\(writer.string()),\(writer.value(depth: 2))]}"
            }
        }
        return Array("\(writer.space())[\(elements.joined(separator: ","))]\(writer.space())".utf8)
    }

    @Test func generatedArraysReadAsStepByStep() async {
        await propertyCheck(count: 1_500, input: Gen.int(in: 0...1_000).array(of: 1...60), Gen.int(in: 1...4)) { tape, batch in
            Self.agree(Self.array(tape), batch: batch)
        }
    }

    @Test func brokenArraysFailAsStepByStep() async {
        await propertyCheck(count: 4_000, input: Gen.int(in: 0...1_000).array(of: 1...60), Gen.int(in: 0...100_000).array(of: 1...3), Gen.int(in: 1...300)) {
            tape, edits, batch in
            Self.agree(ReferenceComparisonTests.mutate(Self.array(tape), edits), batch: batch)
        }
    }

    /// Every prefix: the error comes inside an element, between two, or before the first.
    @Test func everyPrefixFailsAsStepByStep() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...1_000).array(of: 1...60)) { tape in
            let text = Self.array(tape)
            for end in 0...text.count { Self.agree(Array(text[..<end]), batch: 2) }
        }
    }

    @Test func depthLimitsHoldAsStepByStep() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...1_000).array(of: 1...60), Gen.int(in: 0...5)) { tape, depth in
            Self.agree(Self.array(tape), maxDepth: depth, batch: 3)
        }
    }

    @Test func notAnArrayFailsAsBeginArray() {
        for text in ["", " ", "{}", "1", "\"a\"", "]", "nul"] {
            Self.agree(Array(text.utf8), batch: 1)
        }
    }

    /// Where the caller stops the walk, it hears of nothing more and nothing is thrown, even
    /// where the text goes wrong later.
    @Test func aStoppedWalkSaysSoAndGoesNoFurther() async {
        await propertyCheck(count: 1_000, input: Gen.int(in: 0...1_000).array(of: 1...60), Gen.int(in: 0...8), Gen.int(in: 1...4)) {
            tape, stopAfter, batch in
            let bytes = Self.array(tape) + Array("garbage".utf8)
            bytes.withUnsafeBufferPointer { buffer in
                let all = Self.stepByStep(buffer, maxDepth: 512).elements
                let (outcome, completed) = Self.walked(buffer, maxDepth: 512, batch: batch, stopAfter: stopAfter)
                #expect(outcome.elements == Array(all.prefix(stopAfter)))
                #expect(outcome.error == nil)
                // It completes only where the array holds at most as many elements as wanted
                // and the last batch was taken in full.
                if all.count > stopAfter { #expect(completed == false) }
            }
        }
    }
}
