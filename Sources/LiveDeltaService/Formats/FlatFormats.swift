import ByteJSON
import LiveCollections

/// A flat delta in each format (see `DeltaFormat`); the steps in sequence come from
/// LiveCollections (`Delta.sequential`), so every format moves exactly what the batch moves.
extension JSONWriter {
    /// The delta's members: `delta` for `batch`; else `format`, and the operations in a member
    /// named after it (`sequential`, `jsonPatch`, `keyed`), so that each has one schema.
    mutating func flatDelta(_ delta: IndexDelta, format: DeltaFormat, old: [JSONItem], new: [JSONItem]) {
        guard format != .batch else {
            member("delta")
            indexDelta(delta)
            return
        }
        member("format")
        string(format.rawValue)
        member(format.memberName)
        let sequential = delta.sequential(oldCount: old.count)
        switch format {
        case .batch: break
        case .sequential: sequentialOperations(sequential.steps)
        case .jsonPatch: jsonPatch(sequential.steps, new: new)
        case .keyed: keyedOperations(delta, moves: sequential.moves, old: old, new: new)
        }
    }

    /// `{"op": "remove"|"insert"|"change", "position", "count"}` and `{"op": "move", "from", "to"}`.
    private mutating func sequentialOperations(_ steps: [ListStep]) {
        array(steps) { writer, step in
            switch step {
            case .remove(let position, let count): writer.range("remove", position, count)
            case .insert(let position, let count): writer.range("insert", position, count)
            case .change(let position, let count): writer.range("change", position, count)
            case .move(let from, let to):
                writer.raw("{\"op\":\"move\",\"from\":")
                writer.int(from)
                writer.raw(",\"to\":")
                writer.int(to)
                writer.raw("}")
            }
        }
    }

    mutating func range(_ op: StaticString, _ position: Int, _ count: Int) {
        raw("{\"op\":\"")
        raw(op)
        raw("\",\"position\":")
        int(position)
        raw(",\"count\":")
        int(count)
        raw("}")
    }

    /// The same steps as RFC 6902 operations on the array: a range is one operation per
    /// element (`remove` at the same path, `add` at successive ones, with the new item);
    /// `move` is RFC 6902's own (remove at `from`, add at `path`); a change `replace`s.
    private mutating func jsonPatch(_ steps: [ListStep], new: [JSONItem]) {
        raw("[")
        var first = true
        func operation(_ write: (inout JSONWriter) -> Void) {
            if !first { raw(",") }
            first = false
            write(&self)
        }
        for step in steps {
            switch step {
            case .remove(let position, let count):
                for _ in 0..<count { operation { $0.patch("remove", path: position) } }
            case .move(let from, let to):
                operation { writer in
                    writer.raw("{\"op\":\"move\",\"from\":\"/")
                    writer.int(from)
                    writer.raw("\",\"path\":\"/")
                    writer.int(to)
                    writer.raw("\"}")
                }
            case .insert(let position, let count):
                for index in position..<position + count { operation { $0.patch("add", path: index, value: new[index]) } }
            case .change(let position, let count):
                for index in position..<position + count { operation { $0.patch("replace", path: index, value: new[index]) } }
            }
        }
        raw("]")
    }

    private mutating func patch(_ op: StaticString, path index: Int, value: JSONItem? = nil) {
        raw("{\"op\":\"")
        raw(op)
        raw("\",\"path\":\"/")
        int(index)
        raw("\"")
        if let value {
            raw(",\"value\":")
            raw(value.text)
        }
        raw("}")
    }

    /// Removals, moves (each right before the element that follows it in the end), insertions
    /// (before the next kept element), updates: by id, or by `{"id", "occurrence"}` where ids
    /// repeat.
    private mutating func keyedOperations(_ delta: IndexDelta, moves: [SequentialMove], old: [JSONItem], new: [JSONItem]) {
        var isKept = [Bool](repeating: true, count: new.count)
        for position in delta.insertions { isKept[position] = false }
        // The kept element after each new position, for insertions: from the end backwards.
        var nextKept = [Int?](repeating: nil, count: new.count + 1)
        for position in stride(from: new.count - 1, through: 0, by: -1) {
            nextKept[position] = isKept[position] ? position : nextKept[position + 1]
        }
        raw("[")
        var first = true
        func operation(_ op: StaticString, _ item: JSONItem, before: JSONItem?? = nil, value: JSONItem? = nil) {
            if !first { raw(",") }
            first = false
            raw("{\"op\":\"")
            raw(op)
            raw("\",\"id\":")
            key(of: item)
            if let before {
                raw(",\"before\":")
                if let before { key(of: before) } else { raw("null") }
            }
            if let value {
                raw(",\"item\":")
                raw(value.text)
            }
            raw("}")
        }
        for position in delta.deletions { operation("remove", old[position]) }
        for move in moves { operation("move", old[move.source], before: .some(move.before.map { old[$0] })) }
        for position in delta.insertions {
            operation("insert", new[position], before: .some(nextKept[position + 1].map { new[$0] }), value: new[position])
        }
        for reload in delta.reloads { operation("update", new[reload.target], value: new[reload.target]) }
        raw("]")
    }

    /// An item's key: its id as JSON, with its occurrence where ids repeat.
    mutating func key(of item: JSONItem) {
        guard item.occurrence > 0 else {
            identity(item.plainID)
            return
        }
        raw("{\"id\":")
        identity(item.plainID)
        raw(",\"occurrence\":")
        int(Int(item.occurrence))
        raw("}")
    }

    /// An id as JSON (what `JSONItemID.description` says, written without a String).
    mutating func identity(_ id: JSONItemID) {
        let text = Array(id.description.utf8)
        text.withUnsafeBufferPointer { raw($0) }
    }
}
