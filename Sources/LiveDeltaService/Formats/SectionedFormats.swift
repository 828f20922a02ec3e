import ByteJSON
import LiveCollections

/// A sectioned delta in each format but `batch`: one list of operations in the order they
/// apply (LiveCollections' `SectionedDelta.sequential`): sections removed, moved and inserted
/// (with their new items), then items removed, moved (across sections too), inserted and
/// changed, then the sections whose own content changed (`jsonPatch`: their own fields, one
/// by one). `keyed` removes items before
/// anything else: it addresses them by id, and an item that goes into an inserted section
/// arrives with it.
struct SectionedFormatting {
    let delta: SectionedDelta
    let old: [JSONSection]
    let new: [JSONSection]
    let spelling: DeltaSpelling
    let sequential: SectionedSequentialDelta
    /// For each new section that survived, the old section it was.
    private let source: [Int?]
    /// Each section's items after the section stage: a surviving section's old items, an
    /// inserted section's new ones.
    private let stageOne: [[JSONItem]]
    /// Nested lists of changed items, by the item's final path.
    private var nestedByTarget: [ItemPath: [NestedDelta]] = [:]

    init(sectionDelta: IndexDelta, itemDelta: IndexPathDelta, old: [JSONSection], new: [JSONSection], spelling: DeltaSpelling) throws(APIError) {
        delta = SectionedDelta(sectionDelta: sectionDelta, itemDelta: itemDelta)
        self.old = old
        self.new = new
        self.spelling = spelling
        let oldIndex = Dictionary(old.enumerated().map { ($0.element.uniqueID, $0.offset) }, uniquingKeysWith: { first, _ in first })
        let inserted = Set(sectionDelta.insertions)
        let source = new.enumerated().map { inserted.contains($0.offset) ? nil : oldIndex[$0.element.uniqueID] }
        self.source = source
        let stageOne = new.indices.map { index in source[index].map { old[$0].items } ?? new[index].items }
        self.stageOne = stageOne
        do {
            sequential = try delta.sequential(oldSectionCount: old.count, stageOneSizes: stageOne.map(\.count), finalSizes: new.map(\.items.count))
        } catch {
            throw .internalError("the sectioned delta does not apply in sequence: \(error)")
        }
        let pairs = spelling.format == .jsonPatch && spelling.filter != .allFields ? differingPairs() : itemDelta.reloads
        nestedByTarget = NestedDelta.byTarget(pairs, nested: spelling.nested, old: stageOneItem, new: newItem)
    }

    /// The nested lists of the item changed at `target`.
    func nested(_ target: ItemPath) -> [NestedDelta] { nestedByTarget[target] ?? [] }

    func newItem(_ path: ItemPath) -> JSONItem { new[path.section].items[path.item] }

    /// What changed in a kept item, where answers say it field by field.
    func changes(_ pair: ItemPathPair, filter: ContentFilter, always: Bool = false) -> FieldChanges? {
        guard spelling.changes == .fields || always else { return nil }
        return FieldChanges(
            old: stageOneItem(pair.source).text, new: newItem(pair.target).text, filter: filter, excluding: Set(nested(pair.target).map(\.field)))
    }

    /// Kept items whose values differ at all, counted fields or not (see `differingPairs`).
    func differingPairs() -> [ItemPathPair] {
        let deleted = Set(delta.itemDelta.deletions)
        let inserted = Set(delta.itemDelta.insertions)
        var movedFrom = [ItemPath: ItemPath]()
        for move in delta.itemDelta.moves { movedFrom[move.target] = move.source }
        let moved = Set(delta.itemDelta.moves.map(\.source))
        var pairs: [ItemPathPair] = []
        for section in new.indices where source[section] != nil {
            var stayers = stageOne[section].indices.lazy.map { ItemPath(section: section, item: $0) }
                .filter { !deleted.contains($0) && !moved.contains($0) }.makeIterator()
            for row in new[section].items.indices {
                let target = ItemPath(section: section, item: row)
                guard !inserted.contains(target), let from = movedFrom[target] ?? stayers.next() else { continue }
                if !sameMeaning(stageOneItem(from).text, newItem(target).text, counting: .fields(.allFields)) {
                    pairs.append(ItemPathPair(source: from, target: target))
                }
            }
        }
        return pairs.sorted { $0.source < $1.source }
    }

    /// The same, with other item reloads (for a patch that must reach the new document exactly).
    private init(copying other: SectionedFormatting, reloads: [ItemPathPair]) throws(APIError) {
        var itemDelta = other.delta.itemDelta
        itemDelta.reloads = reloads
        try self.init(sectionDelta: other.delta.sectionDelta, itemDelta: itemDelta, old: other.old, new: other.new, spelling: other.spelling)
    }

    /// An item where the section stage left it.
    func stageOneItem(_ path: ItemPath) -> JSONItem { stageOne[path.section][path.item] }

    func write(to writer: inout JSONWriter) throws(APIError) {
        switch spelling.format {
        case .batch: break
        case .sequential: sequentialOperations(&writer)
        case .jsonPatch: try jsonPatch(&writer)
        case .keyed: keyedOperations(&writer)
        }
    }

    // MARK: - batch

    /// The batch item delta, each reload with what changed and its nested lists.
    func writeBatchItemDelta(to writer: inout JSONWriter) {
        writer.delta(
            delta.itemDelta, { $0.path($1) },
            reloadDetails: { writer, pair in
                writer.reloadDetails(changes(pair, filter: spelling.filter), nested: nested(pair.target), within: spelling)
            })
    }

    // MARK: - sequential

    private func sequentialOperations(_ writer: inout JSONWriter) {
        let reloadSources = Dictionary(delta.itemDelta.reloads.map { ($0.target, $0.source) }, uniquingKeysWith: { first, _ in first })
        var list = OperationList(writer: consume writer)
        for step in sequential.sectionSteps {
            list.next { writer in
                switch step {
                case .remove(let position, let count): writer.range("removeSections", position, count)
                case .insert(let position, let count): writer.range("insertSections", position, count)
                case .change(let position, let count): writer.range("changeSections", position, count)
                case .move(let from, let to):
                    writer.raw("{\"op\":\"moveSection\",\"from\":")
                    writer.int(from)
                    writer.raw(",\"to\":")
                    writer.int(to)
                    writer.raw("}")
                }
            }
        }
        for step in sequential.itemSteps {
            switch step {
            case .remove(let section, let position, let count): list.next { $0.rows("remove", section, position, count) }
            case .insert(let section, let position, let count): list.next { $0.rows("insert", section, position, count) }
            case .change(let section, let position, let count)
            where spelling.changes == .fields || (position..<position + count).contains { !nested(ItemPath(section: section, item: $0)).isEmpty }:
                // One item each, with what changed in it.
                for row in position..<position + count {
                    let target = ItemPath(section: section, item: row)
                    let fields = reloadSources[target].flatMap { changes(ItemPathPair(source: $0, target: target), filter: spelling.filter) }
                    list.next { $0.changeOperation(section: section, position: row, fields: fields, nested: nested(target), within: spelling) }
                }
            case .change(let section, let position, let count): list.next { $0.rows("change", section, position, count) }
            case .move(let from, let to):
                list.next { writer in
                    writer.raw("{\"op\":\"move\",\"from\":")
                    writer.path(from)
                    writer.raw(",\"to\":")
                    writer.path(to)
                    writer.raw("}")
                }
            }
        }
        for case .change(let position, let count) in sequential.sectionChanges {
            list.next { $0.range("changeSections", position, count) }
        }
        writer = list.finish()
    }

    // MARK: - jsonPatch

    private func jsonPatch(_ writer: inout JSONWriter) throws(APIError) {
        // The new document exactly: every kept item whose value differs, counted or not.
        let exact = spelling.filter == .allFields ? self : try SectionedFormatting(copying: self, reloads: differingPairs())
        let sources = Dictionary(exact.delta.itemDelta.reloads.map { ($0.target, $0.source) }, uniquingKeysWith: { first, _ in first })
        let sequential = exact.sequential
        var list = OperationList(writer: consume writer)
        let items = "/" + spelling.itemsKey.replacingOccurrences("~", "~0").replacingOccurrences("/", "~1")
        func patch(_ list: inout OperationList, _ op: StaticString, _ path: String, from: String? = nil, value: UnsafeBufferPointer<UInt8>? = nil) {
            list.next { $0.patch(op, path: path, from: from, value: value) }
        }
        func section(_ index: Int) -> String { "/sections/\(index)" }
        func row(_ path: ItemPath) -> String { "/sections/\(path.section)\(items)/\(path.item)" }
        for step in sequential.sectionSteps {
            switch step {
            case .remove(let position, let count): for _ in 0..<count { patch(&list, "remove", section(position)) }
            case .move(let from, let to): patch(&list, "move", section(to), from: section(from))
            case .insert(let position, let count):
                for index in position..<position + count { patch(&list, "add", section(index), value: new[index].text) }
            case .change: break
            }
        }
        for step in sequential.itemSteps {
            switch step {
            case .remove(let s, let position, let count):
                for _ in 0..<count { patch(&list, "remove", row(ItemPath(section: s, item: position))) }
            case .move(let from, let to): patch(&list, "move", row(to), from: row(from))
            case .insert(let s, let position, let count):
                for index in position..<position + count {
                    patch(&list, "add", row(ItemPath(section: s, item: index)), value: new[s].items[index].text)
                }
            case .change(let s, let position, let count):
                for index in position..<position + count {
                    let target = ItemPath(section: s, item: index)
                    let inner = exact.nested(target)
                    let detailed = spelling.changes == .fields || !inner.isEmpty
                    guard detailed,
                        let fields = sources[target].flatMap({
                            exact.changes(ItemPathPair(source: $0, target: target), filter: .allFields, always: true)
                        })
                    else {
                        patch(&list, "replace", row(target), value: newItem(target).text)
                        continue
                    }
                    list.fieldPatch(fields, at: row(target))
                    for nested in inner {
                        JSONWriter.patchOperations(
                            into: &list, prefix: row(target) + "/" + JSONWriter.pointerToken(nested.field), delta: nested.delta,
                            old: ItemRows(nested.old), new: ItemRows(nested.new), spelling: nested.spelling(within: spelling))
                    }
                }
            }
        }
        // Last, the sections whose own content changed: their own fields are patched, as an
        // item's are, and their items (final by then) are left alone, so that a client does not
        // rebuild rows that did not change. A section that is not an object is replaced.
        let itemsName = Array(spelling.itemsKey.utf8)
        for case .change(let position, let count) in sequential.sectionChanges {
            for index in position..<position + count {
                guard let was = source[index],
                    let fields = FieldChanges(old: old[was].text, new: new[index].text, filter: .allFields, excluding: [itemsName])
                else {
                    patch(&list, "replace", section(index), value: new[index].text)
                    continue
                }
                list.fieldPatch(fields, at: section(index))
            }
        }
        writer = list.finish()
    }

    // MARK: - keyed

    private func keyedOperations(_ writer: inout JSONWriter) {
        var list = OperationList(writer: consume writer)
        let insertedSections = Set(delta.sectionDelta.insertions)
        func sectionOperation(
            _ list: inout OperationList, _ op: StaticString, _ id: JSONItemID, before: JSONItemID?? = nil, value: JSONSection? = nil,
            withKeys: Bool = false
        ) {
            list.next { writer in
                writer.raw("{\"op\":\"")
                writer.raw(op)
                writer.raw("\",\"id\":")
                writer.identity(id)
                if let before {
                    writer.raw(",\"before\":")
                    if let before { writer.identity(before) } else { writer.raw("null") }
                }
                if let value {
                    writer.raw(",\"section\":")
                    writer.raw(value.text)
                    // Where ids repeat, the keys its items go by from now on.
                    if withKeys && value.items.contains(where: { $0.occurrence > 0 }) {
                        writer.raw(",\"keys\":")
                        writer.array(value.items) { writer, item in writer.key(of: item) }
                    }
                }
                writer.raw("}")
            }
        }
        func itemOperation(
            _ list: inout OperationList, _ op: StaticString, _ item: JSONItem, section: Int? = nil, before: JSONItem?? = nil, value: JSONItem? = nil,
            fields: FieldChanges? = nil,
            inner: [NestedDelta] = []
        ) {
            list.next {
                $0.keyedItemOperation(
                    op, item, section: section.map { new[$0].uniqueID }, before: before, value: value, fields: fields, nested: inner,
                    spelling: spelling)
            }
        }
        // Items leave first: an item that goes on into an inserted section arrives with it, and
        // by then its key must be free.
        for path in delta.itemDelta.deletions { itemOperation(&list, "remove", stageOneItem(path)) }
        for position in delta.sectionDelta.deletions { sectionOperation(&list, "removeSection", old[position].uniqueID) }
        for move in sequential.sectionMoves {
            sectionOperation(&list, "moveSection", old[move.source].uniqueID, before: .some(move.before.map { old[$0].uniqueID }))
        }
        for position in delta.sectionDelta.insertions {
            let next = (position + 1..<new.count).first { !insertedSections.contains($0) }
            sectionOperation(
                &list, "insertSection", new[position].uniqueID, before: .some(next.map { new[$0].uniqueID }), value: new[position], withKeys: true)
        }
        for move in sequential.itemMoves {
            itemOperation(&list, "move", stageOneItem(move.source), section: move.section, before: .some(move.before.map(stageOneItem)))
        }
        let insertedRows = Set(delta.itemDelta.insertions)
        for path in delta.itemDelta.insertions {
            let rows = new[path.section].items
            let next = (path.item + 1..<rows.count).first { !insertedRows.contains(ItemPath(section: path.section, item: $0)) }
            itemOperation(&list, "insert", rows[path.item], section: path.section, before: .some(next.map { rows[$0] }), value: rows[path.item])
        }
        for reload in delta.itemDelta.reloads {
            let item = newItem(reload.target)
            itemOperation(&list, "update", item, value: item, fields: changes(reload, filter: spelling.filter), inner: nested(reload.target))
        }
        for reload in delta.sectionDelta.reloads { sectionOperation(&list, "updateSection", new[reload.target].uniqueID, value: new[reload.target]) }
        writer = list.finish()
    }
}

extension JSONWriter {
    fileprivate mutating func rows(_ op: StaticString, _ section: Int, _ position: Int, _ count: Int) {
        raw("{\"op\":\"")
        raw(op)
        raw("\",\"section\":")
        int(section)
        raw(",\"position\":")
        int(position)
        raw(",\"count\":")
        int(count)
        raw("}")
    }
}
