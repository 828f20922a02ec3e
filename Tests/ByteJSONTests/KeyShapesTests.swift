import ByteJSON
import PropertyBased
import Testing

/// Remembered keys (`scanValue(findingMember:keyShapes:)`) change nothing but the work: each
/// item of an array reads to the same value, member, repeat, error and offset as without them.
@Suite struct KeyShapesTests {
    /// Key spellings that agree with each other in all but one byte, in the quote or colon after
    /// them, or only once escapes are resolved; of every length up to two words and past it,
    /// one not ASCII.
    static let keys = [
        "id", "ie", "i\\u0064", "title", "titlf", "seven_b", "a_ten_byte", "a_ten_bytf", "a_fourteen_byt", "a_fifteen_bytes", "\u{E9}t\u{E9}", "",
    ]
    static let spaces = ["", " ", "\n\t"]
    static let values = ["1", "\"x\"", "[1,2]", "{\"id\":2}", "true", "-0.5e1"]

    /// An array of objects built from `tape`: each member's key, the space around its colon,
    /// and its value chosen by the next numbers. Items of up to 11 members pass the 8 places.
    static func document(_ tape: [Int]) -> String {
        var numbers = tape.makeIterator()
        func next(_ count: Int) -> Int { (numbers.next() ?? 0) % count }
        var items: [String] = []
        for _ in 0..<(1 + next(6)) {
            var members: [String] = []
            // Mostly the same keys in the same order, as in real arrays; sometimes others.
            let shared = next(3) != 0
            for place in 0..<(1 + next(11)) {
                let key = shared ? keys[place % 5 == 1 ? 3 : place % keys.count] : keys[next(keys.count)]
                members.append("\"\(key)\"\(spaces[next(4) == 0 ? next(3) : 0]):\(spaces[next(3)])\(values[next(values.count)])")
            }
            items.append("{" + members.joined(separator: ",") + "}")
        }
        return "[" + items.joined(separator: ",") + "]"
    }

    /// What reading one item said: its value, member and repeat, or where it failed.
    enum Outcome: Equatable {
        case read(ScannedValue, ScannedValue?, Bool, next: Int)
        case failed(JSONError)
    }

    /// Reads the array's items one by one, remembering keys or not.
    static func read(_ text: [UInt8], remembering: Bool) -> [Outcome] {
        text.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            var shapes = KeyShapes()
            let name = JSONName("id")
            var outcomes: [Outcome] = []
            do throws(JSONError) {
                var more = try scanner.beginArray()
                while more {
                    let (value, member, repeated) =
                        remembering
                        ? try scanner.scanValue(findingMember: name, keyShapes: &shapes)
                        : try scanner.scanValue(findingMember: name)
                    outcomes.append(.read(value, member, repeated, next: scanner.position))
                    more = try scanner.nextElement()
                }
            } catch {
                outcomes.append(.failed(error))
            }
            return outcomes
        }
    }

    @Test func rememberedKeysReadAsTheKeysThemselves() async {
        await propertyCheck(count: 2_000, input: Gen.int(in: 0...1_000).array(of: 1...120), Gen.int(in: 0...2), Gen.int(in: 0...100_000)) {
            tape, change, at in
            var text = Array(Self.document(tape).utf8)
            // Also broken texts: cut short, or one byte changed, where a remembered key would
            // otherwise have matched.
            switch change {
            case 1: text.removeLast(at % text.count)
            case 2: text[at % text.count] ^= UInt8(1 << (at % 7))
            default: break
            }
            let remembering = Self.read(text, remembering: true)
            #expect(remembering == Self.read(text, remembering: false), "\(String(decoding: text, as: UTF8.self))")
            if change == 0 { #expect(remembering.allSatisfy { if case .read = $0 { true } else { false } }) }
        }
    }

    /// Keys that match a remembered one give the same object hash as the same object read with
    /// nothing remembered, and escapes or spaces change neither hash nor member.
    @Test func anItemHashesAlikeWhateverWasRememberedBeforeIt() throws {
        let text = Array(#"[{"id":1,"title":"a"},{"id":1,"title":"a"},{"i\u0064" :1,"title":"a"},{"title":"a","id":1}]"#.utf8)
        let outcomes = Self.read(text, remembering: true)
        #expect(outcomes == Self.read(text, remembering: false))
        let hashes = outcomes.compactMap { if case .read(let value, _, _, _) = $0 { value.hash } else { nil } }
        let members = outcomes.compactMap { if case .read(_, let member, _, _) = $0 { member?.hash } else { nil } }
        #expect(hashes.count == 4 && Set(hashes).count == 1)
        #expect(members.count == 4 && Set(members).count == 1)
    }
}
