import ByteJSON
import LiveCollections
import TestSupport

extension JSONValue {
    public var int: Int? {
        if case .number(let number) = self { return Int(number.description) }
        return nil
    }

    public var array: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    public subscript(path: String...) -> JSONValue? {
        path.reduce(Optional(self)) { $0?[$1] }
    }
}

extension Reply {
    var json: JSONValue { (try? JSONValue(parsing: text)) ?? .null }
    var errorCode: String? { json["error", "code"]?.stringValue }
}

enum WireError: Error { case shape(String) }

/// A delta as the wire carries it, turned back into the engine's types for replaying.
func indexDelta(_ value: JSONValue?) throws -> IndexDelta {
    func indices(_ key: String) throws -> [Int] {
        guard let values = value?[key]?.array else { throw WireError.shape("\(key) missing in \(String(describing: value))") }
        return values.compactMap(\.int)
    }
    func pairs(_ key: String) throws -> [IndexPair] {
        guard let values = value?[key]?.array else { throw WireError.shape("\(key) missing") }
        return values.compactMap { pair in pair["source"]?.int.flatMap { s in pair["target"]?.int.map { IndexPair(source: s, target: $0) } } }
    }
    return IndexDelta(
        deletions: try indices("deletions"), insertions: try indices("insertions"), moves: try pairs("moves"), reloads: try pairs("reloads"))
}

func pathDelta(_ value: JSONValue?) throws -> IndexPathDelta {
    func path(_ value: JSONValue?) throws -> ItemPath {
        guard let section = value?["section"]?.int, let item = value?["item"]?.int else { throw WireError.shape("bad path") }
        return ItemPath(section: section, item: item)
    }
    func paths(_ key: String) throws -> [ItemPath] {
        guard let values = value?[key]?.array else { throw WireError.shape("\(key) missing") }
        return try values.map(path)
    }
    func pairs(_ key: String) throws -> [ItemPathPair] {
        guard let values = value?[key]?.array else { throw WireError.shape("\(key) missing") }
        return try values.map { ItemPathPair(source: try path($0["source"]), target: try path($0["target"])) }
    }
    return IndexPathDelta(
        deletions: try paths("deletions"), insertions: try paths("insertions"), moves: try pairs("moves"), reloads: try pairs("reloads"))
}

/// JSON for test items: `{"id": …, "content": …}`, with key order varied by the content so that
/// equal items are not always spelled alike.
func json(_ thing: Thing) -> String {
    thing.content % 2 == 0 ? "{\"id\":\(thing.id),\"content\":\(thing.content)}" : "{\"content\":\(thing.content).0,\"id\":\(thing.id)}"
}

func json(_ things: [Thing]) -> String { "[" + things.map(json).joined(separator: ",") + "]" }

func json(_ shelves: [Shelf]) -> String {
    "{\"sections\":[" + shelves.map { "{\"id\":\"s\($0.id)\",\"header\":\($0.header),\"items\":\(json($0.items))}" }.joined(separator: ",") + "]}"
}
