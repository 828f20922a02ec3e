import ByteJSON
import LiveCollections
import PropertyBased
import TestSupport
import Testing

@testable import LiveDeltaService

/// The flat formats as the writer spells them, without a server: for random old and new lists,
/// each format's operations, applied as its clients apply them, turn the old list into the new
/// one, and move what the batch delta moves.
@Suite struct FormatTests {
    /// Items `{"id": id, "v": value}`: ids unique, values few, so that kept items often change.
    static let lists = Gen.int(in: 0..<12).array(of: 0...12).map { ids in
        var seen = Set<Int>()
        return ids.filter { seen.insert($0).inserted }.map { ($0, $0 * 7 % 3) }
    }

    static func text(_ list: [(id: Int, value: Int)]) -> String {
        "[" + list.map { #"{"id":\#($0.id),"v":\#($0.value)}"# }.joined(separator: ",") + "]"
    }

    /// The operations `format` writes for the delta from `old` to `new`, and both lists as values.
    static func operations(_ format: DeltaFormat, old: String, new: String) throws -> (
        ops: [JSONValue], old: [JSONValue], new: [JSONValue], delta: IndexDelta
    ) {
        // The collections own the bodies their items point into: they live until the answer is written.
        let oldCollection = try collection(old)
        let newCollection = try collection(new)
        guard case .flat(let oldItems) = oldCollection.shape, case .flat(let newItems) = newCollection.shape else {
            throw ReplayError("not flat")
        }
        let delta = try IndexDelta(from: oldItems, to: newItems)
        var writer = JSONWriter()
        writer.raw("{")
        withExtendedLifetime((oldCollection, newCollection)) {
            writer.flatDelta(delta, spelling: DeltaSpelling(format: format), old: ItemRows(oldItems), new: ItemRows(newItems))
        }
        writer.raw("}")
        let answer = try JSONValue(parsing: String(decoding: writer.bytes, as: UTF8.self))
        guard case .array(let ops)? = answer[format.rawValue], answer["format"]?.stringValue == format.rawValue,
            case .array(let before) = try JSONValue(parsing: old), case .array(let after) = try JSONValue(parsing: new)
        else { throw ReplayError("no \(format.rawValue) operations in \(String(decoding: writer.bytes, as: UTF8.self))") }
        return (ops, before, after, delta)
    }

    static func int(_ value: JSONValue?) throws -> Int {
        guard case .number(let number)? = value, let int = Int(number.description) else {
            throw ReplayError("not an integer: \(String(describing: value))")
        }
        return int
    }

    @Test func sequentialStepsReplayAsAndroidAppliesThem() async {
        await propertyCheck(count: 300, input: Self.lists, Self.lists) { old, new in
            let (ops, before, after, delta) = try Self.operations(.sequential, old: Self.text(old), new: Self.text(new))
            let steps: [AndroidReplayer.Operation] = try ops.map { op in
                switch op["op"]?.stringValue {
                case "remove": .remove(position: try Self.int(op["position"]), count: try Self.int(op["count"]))
                case "insert": .insert(position: try Self.int(op["position"]), count: try Self.int(op["count"]))
                case "change": .change(position: try Self.int(op["position"]), count: try Self.int(op["count"]))
                case "move": .move(from: try Self.int(op["from"]), to: try Self.int(op["to"]))
                default: throw ReplayError("unknown operation \(op)")
                }
            }
            let replayed = try AndroidReplayer.apply(steps, to: before, new: after)
            #expect(replayed.list == after)
            #expect(steps.filter { if case .move = $0 { true } else { false } }.count == delta.moves.count)
        }
    }

    @Test func keyedOperationsReplayByIdAsAWebListAppliesThem() async {
        await propertyCheck(count: 300, input: Self.lists, Self.lists) { old, new in
            let (ops, before, after, delta) = try Self.operations(.keyed, old: Self.text(old), new: Self.text(new))
            let keyed: [KeyedReplayer.Operation<Int, JSONValue>] = try ops.map { op in
                let id = try Self.int(op["id"])
                let before = try op["before"].flatMap { $0 == .null ? nil : try Self.int($0) }
                switch op["op"]?.stringValue {
                case "remove": return .remove(id)
                case "move": return .move(id, before: before)
                case "insert": return .insert(id, before: before, item: try #require(op["item"]))
                case "update": return .update(id, item: try #require(op["item"]))
                default: throw ReplayError("unknown operation \(op)")
                }
            }
            let replayed = try KeyedReplayer.apply(keyed, to: try before.map { (key: try Self.int($0["id"]), item: $0) })
            #expect(replayed.map(\.item) == after)
            #expect(keyed.filter { if case .move = $0 { true } else { false } }.count == delta.moves.count)
        }
    }

    @Test func aJSONPatchTurnsTheOldDocumentIntoTheNewOne() async {
        await propertyCheck(count: 300, input: Self.lists, Self.lists) { old, new in
            let (ops, before, after, _) = try Self.operations(.jsonPatch, old: Self.text(old), new: Self.text(new))
            var document = before
            func index(_ path: JSONValue?, adding: Bool = false) throws -> Int {
                guard let path = path?.stringValue, path.hasPrefix("/") else { throw ReplayError("bad path \(String(describing: path))") }
                if adding && path == "/-" { return document.count }
                guard let index = Int(path.dropFirst()), index >= 0, index < document.count + (adding ? 1 : 0) else {
                    throw ReplayError("path \(path) is outside \(document.count) items")
                }
                return index
            }
            for op in ops {
                switch op["op"]?.stringValue {
                case "remove": document.remove(at: try index(op["path"]))
                case "add": document.insert(try #require(op["value"]), at: try index(op["path"], adding: true))
                case "replace": document[try index(op["path"])] = try #require(op["value"])
                case "move":
                    let moved = document.remove(at: try index(op["from"]))
                    document.insert(moved, at: try index(op["path"], adding: true))
                default: throw ReplayError("unknown operation \(op)")
                }
            }
            #expect(document == after)
        }
    }
}
