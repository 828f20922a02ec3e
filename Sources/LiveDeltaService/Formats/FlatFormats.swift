import ByteJSON
import LiveCollections

/// How an answer spells its delta: the format, how much a changed item says, what counts as a
/// change, and where sections keep their items.
struct DeltaSpelling: Sendable {
    var format: DeltaFormat = .batch
    var changes: ChangeDetail = .rows
    var filter: ContentFilter = .allFields
    var itemsKey = "items"
    /// Items' list fields answered with deltas of their own.
    var nested: [String: DiffOptions] = [:]
}

extension DiffOptions {
    var spelling: DeltaSpelling {
        DeltaSpelling(format: format, changes: self.changes, filter: filter, itemsKey: itemsKey, nested: nested)
    }
}

/// A flat delta in each format (see `DeltaFormat`); the steps in sequence come from
/// LiveCollections (`Delta.sequential`), so every format moves exactly what the batch moves.
extension JSONWriter {
    /// The delta's members: `delta` for `batch`; else `format`, and the operations in a member
    /// named after it (`sequential`, `jsonPatch`, `keyed`), so that each has one schema.
    mutating func flatDelta(_ delta: IndexDelta, spelling: DeltaSpelling, old: ItemRows, new: ItemRows) {
        let format = spelling.format
        if format == .jsonPatch {
            // A patch finds its own changed items: every kept one whose value differs.
            member("format")
            string(format.rawValue)
            member(format.memberName)
            var list = OperationList(writer: consume self)
            Self.patchOperations(into: &list, prefix: "", delta: delta, old: old, new: new, spelling: spelling)
            self = list.finish()
            return
        }
        // Lists within changed items, by the item's new position.
        let nestedByTarget = NestedDelta.byTarget(delta.reloads, nested: spelling.nested, old: { old[$0] }, new: { new[$0] })
        func changes(_ pair: IndexPair, filter: ContentFilter) -> FieldChanges? {
            guard spelling.changes == .fields else { return nil }
            let excluded = Set(nestedByTarget[pair.target]?.map(\.field) ?? [])
            return FieldChanges(old: old[pair.source].text, new: new[pair.target].text, filter: filter, excluding: excluded)
        }
        let nested = { (target: Int) in nestedByTarget[target] ?? [] }
        guard format != .batch else {
            member("delta")
            self.delta(
                delta, { $0.int($1) },
                reloadDetails: { writer, pair in
                    writer.reloadDetails(changes(pair, filter: spelling.filter), nested: nested(pair.target), within: spelling)
                })
            return
        }
        member("format")
        string(format.rawValue)
        member(format.memberName)
        switch format {
        case .batch, .jsonPatch: break
        case .sequential:
            let sources = Dictionary(delta.reloads.map { ($0.target, $0.source) }, uniquingKeysWith: { first, _ in first })
            sequentialOperations(
                delta.sequential(oldCount: old.count).steps, fieldByField: spelling.changes == .fields, spelling: spelling, nested: nested
            ) { target in
                sources[target].flatMap { changes(IndexPair(source: $0, target: target), filter: spelling.filter) }
            }
        case .keyed:
            // The moves in sequence alone: the steps around them are not needed (a window's delta
            // often has no moves at all).
            let moves = delta.moves.isEmpty ? [] : delta.sequential(oldCount: old.count).moves
            keyedOperations(delta, moves: moves, old: old, new: new, spelling: spelling, nested: nested) {
                changes($0, filter: spelling.filter)
            }
        }
    }

    /// A flat delta as RFC 6902 operations under `prefix` (a JSON Pointer to the array), onto
    /// `list`: the new document exactly, so every kept item whose value differs is patched,
    /// counted or not; a changed item is replaced whole, or field by field where answers say
    /// what changed or where it holds a nested list, whose own patch then follows under it.
    static func patchOperations(
        into list: inout OperationList, prefix: String, delta: IndexDelta, old: ItemRows, new: ItemRows, spelling: DeltaSpelling
    ) {
        var exact = delta
        exact.reloads = spelling.filter == .allFields ? delta.reloads : differingPairs(delta, old: old, new: new)
        let nestedByTarget = NestedDelta.byTarget(exact.reloads, nested: spelling.nested, old: { old[$0] }, new: { new[$0] })
        let sources = Dictionary(exact.reloads.map { ($0.target, $0.source) }, uniquingKeysWith: { first, _ in first })
        func path(_ index: Int) -> String { "\(prefix)/\(index)" }
        for step in exact.sequential(oldCount: old.count).steps {
            switch step {
            case .remove(let position, let count):
                for _ in 0..<count { list.next { $0.patch("remove", path: path(position)) } }
            case .move(let from, let to): list.next { $0.patch("move", path: path(to), from: path(from)) }
            case .insert(let position, let count):
                for index in position..<position + count { list.next { $0.patch("add", path: path(index), value: new[index]) } }
            case .change(let position, let count):
                for index in position..<position + count {
                    let nested = nestedByTarget[index] ?? []
                    if nested.isEmpty && spelling.changes == .rows {
                        list.next { $0.patch("replace", path: path(index), value: new[index]) }
                        continue
                    }
                    let excluded = Set(nested.map(\.field))
                    if let source = sources[index],
                        let fields = FieldChanges(old: old[source].text, new: new[index].text, filter: .allFields, excluding: excluded)
                    {
                        list.fieldPatch(fields, at: path(index))
                    } else {
                        list.next { $0.patch("replace", path: path(index), value: new[index]) }
                        continue
                    }
                    for inner in nested {
                        patchOperations(
                            into: &list, prefix: path(index) + "/" + JSONWriter.pointerToken(inner.field), delta: inner.delta,
                            old: ItemRows(inner.old), new: ItemRows(inner.new), spelling: inner.spelling(within: spelling))
                    }
                }
            }
        }
    }

    /// Kept items whose values differ at all, as (old, new) positions: where a content filter
    /// leaves fields out, they may differ without being reloads.
    static func differingPairs(_ delta: IndexDelta, old: ItemRows, new: ItemRows) -> [IndexPair] {
        var isDeleted = [Bool](repeating: false, count: old.count)
        for position in delta.deletions { isDeleted[position] = true }
        var movedFrom = [Int?](repeating: nil, count: new.count)
        var isMoved = [Bool](repeating: false, count: old.count)
        for move in delta.moves {
            movedFrom[move.target] = move.source
            isMoved[move.source] = true
        }
        var isInserted = [Bool](repeating: false, count: new.count)
        for position in delta.insertions { isInserted[position] = true }
        var stayers = (0..<old.count).lazy.filter { !isDeleted[$0] && !isMoved[$0] }.makeIterator()
        var pairs: [IndexPair] = []
        for target in new.indices where !isInserted[target] {
            guard let source = movedFrom[target] ?? stayers.next() else { break }
            if !sameMeaning(old[source].text, new[target].text, counting: .fields(.allFields)) {
                pairs.append(IndexPair(source: source, target: target))
            }
        }
        return pairs.sorted { $0.source < $1.source }
    }

    /// `{"op": "remove"|"insert"|"change", "position", "count"}` and `{"op": "move", "from", "to"}`;
    /// field by field, each change is its own, with what changed as its `payload`.
    private mutating func sequentialOperations(
        _ steps: [ListStep], fieldByField: Bool, spelling: DeltaSpelling, nested: (Int) -> [NestedDelta], changes: (Int) -> FieldChanges?
    ) {
        var list = OperationList(writer: consume self)
        for step in steps {
            switch step {
            case .remove(let position, let count): list.next { $0.range("remove", position, count) }
            case .insert(let position, let count): list.next { $0.range("insert", position, count) }
            case .change(let position, let count) where fieldByField || (position..<position + count).contains { !nested($0).isEmpty }:
                for index in position..<position + count {
                    list.next { $0.changeOperation(position: index, fields: changes(index), nested: nested(index), within: spelling) }
                }
            case .change(let position, let count): list.next { $0.range("change", position, count) }
            case .move(let from, let to):
                list.next { writer in
                    writer.raw("{\"op\":\"move\",\"from\":")
                    writer.int(from)
                    writer.raw(",\"to\":")
                    writer.int(to)
                    writer.raw("}")
                }
            }
        }
        self = list.finish()
    }

    /// A sequential `change` of one item (in `section`, for a sectioned answer), with what changed
    /// in it as its `payload` and its nested lists.
    mutating func changeOperation(section: Int? = nil, position: Int, fields: FieldChanges?, nested: [NestedDelta], within spelling: DeltaSpelling) {
        raw("{\"op\":\"change\",")
        if let section {
            raw("\"section\":")
            int(section)
            raw(",")
        }
        raw("\"position\":")
        int(position)
        raw(",\"count\":1")
        changeDetails(fields, as: ",\"payload\":", nested: nested, within: spelling)
        raw("}")
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

    /// One RFC 6902 operation whose value is an item.
    mutating func patch(_ op: StaticString, path: String, from: String? = nil, value: JSONItem) {
        patch(op, path: path, from: from, value: value.text)
    }

    /// One RFC 6902 operation: `{"op", "from"?, "path", "value"?}`, the value's text as it is.
    mutating func patch(_ op: StaticString, path: String, from: String? = nil, value: UnsafeBufferPointer<UInt8>? = nil) {
        raw("{\"op\":\"")
        raw(op)
        raw("\",")
        if let from {
            key("from")
            string(from)
            raw(",")
        }
        key("path")
        string(path)
        if let value {
            raw(",\"value\":")
            raw(value)
        }
        raw("}")
    }

    /// Removals, moves (each right before the element that follows it in the end), insertions
    /// (before the next kept element), updates (the new item, or what changed): by id, or by
    /// `{"id", "occurrence"}` where ids repeat.
    private mutating func keyedOperations(
        _ delta: IndexDelta, moves: [SequentialMove], old: ItemRows, new: ItemRows, spelling: DeltaSpelling, nested: (Int) -> [NestedDelta],
        changes: (IndexPair) -> FieldChanges?
    ) {
        // The kept element after each insertion (-1: none, the end), from the last backwards:
        // the one after its position, or where that is inserted too, the next one's. Kept for
        // the insertions alone, not for every new position: a window's delta inserts a row or
        // two of fifty.
        let insertions = delta.insertions
        var nextKept = [Int](repeating: -1, count: insertions.count)
        for index in insertions.indices.reversed() {
            let after = insertions[index] + 1
            if index + 1 < insertions.count, insertions[index + 1] == after {
                nextKept[index] = nextKept[index + 1]
            } else if after < new.count {
                nextKept[index] = after
            }
        }
        var list = OperationList(writer: consume self)
        func operation(
            _ list: inout OperationList, _ op: StaticString, _ item: JSONItem, before: JSONItem?? = nil, value: JSONItem? = nil,
            fields: FieldChanges? = nil, inner: [NestedDelta] = []
        ) {
            list.next { $0.keyedItemOperation(op, item, before: before, value: value, fields: fields, nested: inner, spelling: spelling) }
        }
        for position in delta.deletions { operation(&list, "remove", old[position]) }
        for move in moves { operation(&list, "move", old[move.source], before: .some(move.before.map { old[$0] })) }
        for (index, position) in insertions.enumerated() {
            let before = nextKept[index] < 0 ? nil : new[nextKept[index]]
            operation(&list, "insert", new[position], before: .some(before), value: new[position])
        }
        for reload in delta.reloads {
            operation(&list, "update", new[reload.target], value: new[reload.target], fields: changes(reload), inner: nested(reload.target))
        }
        self = list.finish()
    }

    /// One keyed operation on an item: `{"op", "id", "section"?, "before"?, "changes" | "item"?}`
    /// (`before` given as nil: null, the end).
    mutating func keyedItemOperation(
        _ op: StaticString, _ item: JSONItem, section: JSONItemID? = nil, before: JSONItem??, value: JSONItem?, fields: FieldChanges?,
        nested: [NestedDelta] = [], spelling: DeltaSpelling = DeltaSpelling()
    ) {
        raw("{\"op\":\"")
        raw(op)
        raw("\",\"id\":")
        key(of: item)
        if let section {
            raw(",\"section\":")
            identity(section)
        }
        if let before {
            raw(",\"before\":")
            if let before { key(of: before) } else { raw("null") }
        }
        if let fields {
            raw(",\"changes\":")
            fieldChanges(fields)
        } else if let value {
            raw(",\"item\":")
            raw(value.text)
        }
        if !nested.isEmpty {
            raw(",\"nested\":")
            nestedDeltas(nested, within: spelling)
        }
        raw("}")
    }

    /// An item's key: its id as JSON, with its occurrence where ids repeat.
    mutating func key(of item: JSONItem) {
        guard item.occurrence > 0 else {
            identity(item.storedID, in: item.reference)
            return
        }
        raw("{\"id\":")
        identity(item.storedID, in: item.reference)
        raw(",\"occurrence\":")
        int(Int(item.occurrence))
        raw("}")
    }

    /// An id as JSON (what `JSONItemID.description` says).
    mutating func identity(_ id: JSONItemID) {
        identity(id.stored, in: DocumentRef(id.document))
    }

    /// An id as JSON, written from where it is kept: a fan-out to thousands of keyed windows
    /// writes a few ids for each, and made into a String each was two allocations and a
    /// counted reference. A number kept in full is spelled canonically.
    mutating func identity(_ stored: StoredID, in document: DocumentRef) {
        if stored.storage == .inline {
            int(Int(stored.bytes.inlineValue))
            return
        }
        let text = document.slice(stored.bytes, in: stored.storage)
        switch stored.kind {
        case .number:
            let spelled = Array(JSONScanner.number(fromIdentity: text).description.utf8)
            spelled.withUnsafeBufferPointer { raw($0) }
        case .string: string(generalizedUTF8: text)
        default: raw(text)
        }
    }
}
