import ByteJSON

/// Keyed operations on a sectioned session: sections by id, items by id across sections. The
/// sections the operations changed are written out and read again (with unique ids; every
/// section, with repeated ones, whose occurrences count across sections); the others are the
/// held sections themselves. With unique ids, the named ids are found among the held items in
/// one pass over their stored hashes, and a section's items are listed only where an operation
/// reaches it; the delta is the diff of the sections (ids and own fields) and of the items of
/// the sections the operations changed alone
/// (`AnimationPolicy.animatedDelta(from:to:touchedOld:touchedNew:)`). With repeated ids, the
/// result is diffed as an update would be.
struct SectionedKeyedEdit {
    let body: ChangeBody
    let operations: [KeyedOperation]
    let reading: ChangeReading

    private struct Row {
        var key: JSONItemID
        var text: LazyJSON
    }

    private struct Block {
        /// Its index in `blocks` and its node in `order`, wherever it moves: the held sections'
        /// first, in their order, then those operations inserted.
        let uid: Int
        var key: JSONItemID
        /// The section object its own fields come from (its items member is replaced by `rows`).
        var section: LazyJSON
        /// The held section its items began as; nil for a section an operation inserted.
        let origin: Int?
        /// Its items, once an operation has reached it; nil while they are the held section's.
        /// A chain, so that an insert, move or remove by id costs the same in a section of any
        /// length (a node of the held items is the item's index in its held section).
        var rows: ItemChain<Row>?
        /// The held section it is, while no operation has changed it.
        var held: Int?
    }

    /// Where an item is that an operation put somewhere (or took out), by block and node.
    private enum Place {
        case at(block: Int, node: Int)
        case removed
    }

    /// An operation resolved against the edit's keys and items: indices into them.
    private struct Step {
        var id: Int
        var before: Int?
        var section: Int?
        var item: Int?
        /// insertSection: its items' places in the item texts, and their keys where given.
        var rows: Range<Int> = 0..<0
        var rowKeys: [Int]?
    }

    /// What the operations name, read once.
    private struct Named {
        var keys: [JSONItem]
        var items: [JSONItem]
        var itemTexts: [UnsafeBufferPointer<UInt8>]
        var steps: [Step]
        /// The documents keys and items point into, until the result is written out.
        var owners: (DocumentOwners, DocumentOwners)
    }

    func apply(to sections: [JSONSection], owners: DocumentOwners) throws(APIError) -> EditOutcome {
        let named = try resolve()
        defer { withExtendedLifetime(named.owners) {} }
        var edit = BlockEdit(sections: sections, named: named, unique: reading.options.unique)
        var rewriteBudget = ChangeReading.maxRewrittenBytes
        for (operation, step) in zip(operations, named.steps) {
            if let before = step.before, edit.ids[before] == edit.ids[step.id] {
                throw APIError(.invalidOperation, message: "nothing goes before itself", pointer: operation.pointer.appending("before").description)
            }
            if operation.kind.onSection {
                try edit.runOnSection(operation, step, body: body, itemsKey: reading.options.itemsKey)
            } else {
                try edit.runOnItem(operation, step, body: body, reading: reading, budget: &rewriteBudget)
            }
        }
        return try finish(edit, sections: sections, owners: owners)
    }

    /// Reads the operations' keys and items (and the items of the sections they insert).
    private func resolve() throws(APIError) -> Named {
        let unique = reading.options.unique
        var named = NamedKeys()
        func addKey(_ key: ItemKey, item: Bool) throws(APIError) -> Int {
            if unique || !item, key.occurrence != nil {
                throw APIError(
                    .invalidOperation,
                    message: item ? "this session's ids are unique: a key is an id, with no occurrence" : "sections go by their id alone",
                    pointer: key.pointer.description)
            }
            return named.add(key, in: body, occurrence: unique || !item ? 0 : key.occurrence ?? 1)
        }
        var itemTexts: [UnsafeBufferPointer<UInt8>] = []
        var itemOrigins: [JSONPointer] = []
        var steps: [Step] = []
        for operation in operations {
            let onSection = operation.kind.onSection
            var step = Step(id: try addKey(operation.id, item: !onSection))
            if case .before(let place) = operation.place { step.before = try addKey(place, item: !onSection) }
            if !onSection, let range = operation.section {
                step.section = try addKey(try sectionKey(range, operation), item: false)
            }
            if (operation.kind == .insert || operation.kind == .move) && step.section == nil {
                throw APIError(
                    .invalidOperation, message: "in a sectioned session, \(operation.kind.rawValue) names the section the item goes to",
                    pointer: operation.pointer.appending("section").description)
            }
            if let range = operation.item {
                itemTexts.append(body.text(range))
                itemOrigins.append(operation.pointer.appending("item"))
                step.item = itemTexts.count - 1
            }
            if operation.kind == .insertSection, let range = operation.section {
                let start = itemTexts.count
                let count = try sectionItems(range, operation, texts: &itemTexts, origins: &itemOrigins)
                step.rows = start..<itemTexts.count
                if let keys = operation.keys {
                    guard keys.count == count else {
                        throw APIError(
                            .invalidOperation, message: "keys must name each of the section's \(count) items",
                            pointer: operation.pointer.appending("keys").description)
                    }
                    step.rowKeys = try keys.map { key throws(APIError) in try addKey(key, item: true) }
                }
            }
            steps.append(step)
        }
        let (keys, keyOwners) = try named.read(with: reading)
        let (items, itemOwners) = try reading.items(itemTexts, origins: itemOrigins)
        return Named(keys: keys, items: items, itemTexts: itemTexts, steps: steps, owners: (keyOwners, itemOwners))
    }

    /// Adds the items of an inserted section to `texts`; answers how many elements its items
    /// array has.
    private func sectionItems(
        _ range: Range<Int>, _ operation: KeyedOperation, texts: inout [UnsafeBufferPointer<UInt8>], origins: inout [JSONPointer]
    ) throws(APIError) -> Int {
        var value = LazyJSON.text(body.text(range))
        value.open()
        guard case .object(let members) = value, let rows = members[reading.options.itemsKeyBytes] else {
            throw APIError(
                .invalidOperation, message: "the section needs its items under \"\(reading.options.itemsKey)\"",
                pointer: operation.pointer.appending("section").description)
        }
        var list = rows
        list.open()
        guard case .array(let elements) = list else {
            throw APIError(
                .invalidOperation, message: "the section's \"\(reading.options.itemsKey)\" must be an array",
                pointer: operation.pointer.appending("section").appending(reading.options.itemsKey).description)
        }
        for (index, element) in elements.enumerated() {
            guard case .text(let text) = element else { continue }
            texts.append(text)
            origins.append(operation.pointer.appending("section").appending(reading.options.itemsKey).appending(index))
        }
        return elements.count
    }

    /// Writes out the sections the operations changed and reads them back; with unique ids
    /// and the documents within `SessionRewrite`'s bound, the held sections kept are kept
    /// as they are and the delta is worked out from the changed ones.
    private func finish(_ edit: BlockEdit, sections: [JSONSection], owners: DocumentOwners) throws(APIError) -> EditOutcome {
        var edit = edit
        // Occurrences of repeated ids count across sections: every section is read again then.
        // So is every section where the session's documents reach `SessionRewrite.maxDocuments`
        // (each edit that keeps sections adds one), which writes the session anew into one.
        let keepsHeld = edit.unique && SessionRewrite.keepsHeld(adding: owners)
        let uids = edit.order.materialize(finding: []).elements
        if !keepsHeld { for uid in uids { edit.reach(uid) } }
        let ordered = uids.map { edit.blocks[$0] }
        let rewritten = ordered.filter { !keepsHeld || $0.held == nil }
        var writer = JSONWriter()
        writer.raw("{\"sections\":[")
        for (index, block) in rewritten.enumerated() {
            if index > 0 { writer.raw(",") }
            var section = block.section
            section.open()
            guard case .object(var members) = section else { throw .internalError("a section is not an object") }
            // At the end, wherever the section had its items.
            _ = members.remove(reading.options.itemsKeyBytes)
            let rows = block.rows?.materialize(finding: []).elements ?? []
            members.append(reading.options.itemsKeyBytes, .array(ChunkedList(rows.lazy.map(\.text))))
            LazyJSON.object(members).write(&writer)
        }
        writer.raw("]}")
        let read = try reading.collection(encoded: writer.bytes, sectioned: true) { _ in operations.last?.pointer ?? JSONPointer("operations") }
        guard keepsHeld else { return .collection(read) }
        guard case .sectioned(let written) = read.shape, written.count == rewritten.count else {
            throw .internalError("the changed sections were not read back")
        }
        var next = written.makeIterator()
        let result = ordered.compactMap { block in block.held.map { sections[$0] } ?? next.next() }
        let resultOwners = owners.merging(read.owners)
        // The held sections kept are as they were, items and all: what changed is in the
        // rewritten sections and the removed ones. No item of theirs has the id of one in a kept
        // section: inserts were checked against all, and updates keep their ids.
        let keptOld = Set(ordered.compactMap(\.held))
        if let delta = try? reading.options.policy.animatedDelta(
            from: sections, to: result, touchedOld: sections.indices.filter { !keptOld.contains($0) },
            touchedNew: ordered.indices.filter { ordered[$0].held == nil })
        {
            return .sectioned(result, owners: resultOwners, delta: delta)
        }
        return .collection(.sectioned(result, owners: resultOwners))
    }

    /// The held sections under the operations: blocks (a section each, its rows listed once an
    /// operation reaches it) in an order kept as a chain, and where the named items are.
    private struct BlockEdit {
        let sections: [JSONSection]
        let unique: Bool
        let keys: [JSONItem]
        let ids: [JSONItemID]
        let items: [JSONItem]
        let itemTexts: [UnsafeBufferPointer<UInt8>]
        var blocks: [Block]
        /// The blocks in the order the operations leave, as a chain of their uids, so that
        /// moving or removing a section costs the same in a list of any length.
        var order: ItemChain<Int>
        /// The uid of each section in the list, by id.
        var sectionUID: [JSONItemID: Int]
        /// The items operations put somewhere else (or took out), by their key. With unique
        /// ids, any other named item is where its held section's block is, at its held row;
        /// with repeated ones, every item is here from the start.
        var placed: [JSONItemID: Place] = [:]
        /// Where the held items with the ids the operations name (and the ids of the sections'
        /// items they insert) are, found in one pass over the items' stored hashes.
        var heldPlaces: [JSONItemID: (section: Int, row: Int)] = [:]

        init(sections: [JSONSection], named: Named, unique: Bool) {
            self.sections = sections
            self.unique = unique
            keys = named.keys
            ids = named.keys.map(\.uniqueID)
            items = named.items
            itemTexts = named.itemTexts
            // Repeated ids: occurrences count across sections, so every section is listed
            // (and written out again).
            blocks = sections.enumerated().map { index, section in
                Block(
                    uid: index, key: section.uniqueID, section: .text(section.text), origin: index,
                    rows: unique ? nil : ItemChain(Self.rows(of: section)), held: index)
            }
            order = ItemChain(Array(blocks.indices))
            sectionUID = [JSONItemID: Int](minimumCapacity: blocks.count)
            for block in blocks { sectionUID[block.key] = block.uid }
            if !unique {
                for block in blocks {
                    for (row, item) in (block.rows?.base ?? []).enumerated() { placed[item.key] = .at(block: block.uid, node: row) }
                }
                return
            }
            let probes = keys + items
            let finder = HashFinder(probes)
            for (s, section) in sections.enumerated() {
                section.items.withUnsafeBufferPointer { held in
                    for row in held.indices {
                        if let found = finder.find(held[row]) { heldPlaces[probes[found].uniqueID] = (s, row) }
                    }
                }
            }
        }

        static func rows(of section: JSONSection) -> [Row] { section.items.map { Row(key: $0.uniqueID, text: .text($0.text)) } }

        /// Lists the rows of block `b` where no operation has reached it yet.
        mutating func reach(_ b: Int) {
            guard blocks[b].rows == nil, let origin = blocks[b].origin else { return }
            blocks[b].rows = ItemChain(Self.rows(of: sections[origin]))
        }

        /// The item with the id `key`: its block (its rows listed) and its node there.
        mutating func findItem(_ key: JSONItemID) -> (block: Int, node: Int)? {
            if let place = placed[key] {
                guard case .at(let uid, let node) = place, sectionUID[blocks[uid].key] == uid else { return nil }
                return (uid, node)
            }
            // A held section's block has its index as uid.
            guard unique, let held = heldPlaces[key], sectionUID[blocks[held.section].key] == held.section else { return nil }
            reach(held.section)
            return (held.section, held.row)
        }

        func itemKey(of index: Int, occurrence: UInt32) -> JSONItemID {
            var item = items[index]
            item.occurrence = unique ? 0 : occurrence
            return item.uniqueID
        }

        private static func conflict(_ operation: KeyedOperation, _ member: String, _ message: String) -> APIError {
            APIError(.changeConflict, message: message, pointer: operation.pointer.appending(member).description)
        }

        private static func invalid(_ operation: KeyedOperation, _ member: String, _ message: String) -> APIError {
            APIError(.invalidOperation, message: message, pointer: operation.pointer.appending(member).description)
        }

        /// insertSection, updateSection, moveSection, removeSection.
        mutating func runOnSection(_ operation: KeyedOperation, _ step: Step, body: ChangeBody, itemsKey: String) throws(APIError) {
            let id = ids[step.id]
            let found = sectionUID[id]
            var place = ItemChain<Int>.tail
            if let before = step.before {
                guard let uid = sectionUID[ids[before]] else {
                    throw Self.conflict(operation, "before", "before names the section \(ids[before].description), which is not in the list")
                }
                place = uid
            }
            switch operation.kind {
            case .removeSection:
                guard let found else { throw Self.conflict(operation, "id", "there is no section \(id.description) to remove") }
                order.unlink(found)
                sectionUID[id] = nil
            case .moveSection:
                guard let found else { throw Self.conflict(operation, "id", "there is no section \(id.description) to move") }
                order.unlink(found)
                order.link(found, before: place)
            case .updateSection:
                guard let found, let range = operation.section else {
                    throw Self.conflict(operation, "id", "there is no section \(id.description) to update")
                }
                reach(found)
                blocks[found].section = .text(body.text(range))
                blocks[found].held = nil
            default:
                try insertSection(operation, step, at: place, body: body, itemsKey: itemsKey)
            }
        }

        private mutating func insertSection(_ operation: KeyedOperation, _ step: Step, at place: Int, body: ChangeBody, itemsKey: String)
            throws(APIError)
        {
            let id = ids[step.id]
            guard sectionUID[id] == nil else {
                throw APIError(
                    .duplicateID, message: "there is already a section \(id.description)", pointer: operation.pointer.appending("id").description)
            }
            guard let range = operation.section else { throw Self.invalid(operation, "section", "insertSection needs the section") }
            var rows: [Row] = []
            var rowKeys = Set<JSONItemID>()
            for (offset, index) in step.rows.enumerated() {
                let key = step.rowKeys.map { ids[$0[offset]] } ?? itemKey(of: index, occurrence: UInt32(offset + 1))
                if findItem(key) != nil || !rowKeys.insert(key).inserted {
                    throw APIError(
                        .duplicateID, message: "the list already holds an item \(key.description)",
                        pointer: operation.pointer.appending("section").appending(itemsKey).appending(offset).description)
                }
                rows.append(Row(key: key, text: .text(itemTexts[index])))
            }
            let uid = order.add(blocks.count)
            blocks.append(Block(uid: uid, key: id, section: .text(body.text(range)), origin: nil, rows: ItemChain(rows), held: nil))
            order.link(uid, before: place)
            sectionUID[id] = uid
            for (node, row) in rows.enumerated() { placed[row.key] = .at(block: uid, node: node) }
        }

        /// Where an item operation's item goes: its section's block and the node it goes
        /// before; nil where the operation names no section.
        private mutating func target(of operation: KeyedOperation, _ step: Step) throws(APIError) -> (block: Int, before: Int)? {
            guard let section = step.section else { return nil }
            guard let block = sectionUID[ids[section]] else {
                throw Self.conflict(operation, "section", "there is no section \(ids[section].description)")
            }
            reach(block)
            guard let before = step.before else { return (block, ItemChain<Row>.tail) }
            guard let place = findItem(ids[before]), place.block == block else {
                throw Self.conflict(operation, "before", "before names \(ids[before].description), which is not in that section")
            }
            return (block, place.node)
        }

        /// insert, move, remove, update.
        mutating func runOnItem(
            _ operation: KeyedOperation, _ step: Step, body: ChangeBody, reading: ChangeReading, budget: inout Int
        ) throws(APIError) {
            let id = ids[step.id]
            let found = findItem(id)
            let target = try target(of: operation, step)
            switch operation.kind {
            case .insert:
                guard found == nil else {
                    throw APIError(
                        .duplicateID, message: "the list already holds an item \(id.description)",
                        pointer: operation.pointer.appending("id").description)
                }
                guard let index = step.item, let target else { throw Self.invalid(operation, "item", "insert needs the item and its section") }
                guard items[index].plainID == keys[step.id].plainID else {
                    throw Self.invalid(operation, "item", "the item's id is not the operation's id")
                }
                guard let node = blocks[target.block].rows?.add(Row(key: id, text: .text(itemTexts[index]))) else {
                    throw .internalError("a reached section has no rows")
                }
                blocks[target.block].rows?.link(node, before: target.before)
                blocks[target.block].held = nil
                placed[id] = .at(block: target.block, node: node)
            case .move:
                guard let found, let target else { throw Self.conflict(operation, "id", "there is no item \(id.description) to move") }
                guard let row = blocks[found.block].rows?.element(found.node) else { throw .internalError("a found item was not listed") }
                blocks[found.block].rows?.unlink(found.node)
                if target.block == found.block {
                    blocks[found.block].rows?.link(found.node, before: target.before)
                } else if let node = blocks[target.block].rows?.add(row) {
                    blocks[target.block].rows?.link(node, before: target.before)
                    placed[id] = .at(block: target.block, node: node)
                }
                blocks[found.block].held = nil
                blocks[target.block].held = nil
            case .remove:
                guard let found else { throw Self.conflict(operation, "id", "there is no item \(id.description) to remove") }
                blocks[found.block].rows?.unlink(found.node)
                blocks[found.block].held = nil
                placed[id] = .removed
            default:
                guard let found else { throw Self.conflict(operation, "id", "there is no item \(id.description) to update") }
                try update(found, operation, step, body: body, reading: reading, budget: &budget)
            }
        }

        private mutating func update(
            _ found: (block: Int, node: Int), _ operation: KeyedOperation, _ step: Step, body: ChangeBody, reading: ChangeReading,
            budget: inout Int
        ) throws(APIError) {
            let id = ids[step.id]
            blocks[found.block].held = nil
            if let index = step.item {
                guard items[index].plainID == keys[step.id].plainID else {
                    throw Self.invalid(operation, "item", "an update cannot change the item's id")
                }
                blocks[found.block].rows?.replace(found.node, with: Row(key: id, text: .text(itemTexts[index])))
            } else if let changes = operation.changes, let old = blocks[found.block].rows?.element(found.node).text.bytes {
                let changed = try old.withUnsafeBufferPointer { old throws(APIError) in
                    try reading.item(old, changedBy: changes, body: body.body.bytes, origin: operation.pointer.appending("changes"), budget: &budget)
                }
                // The changed item keeps its id, as an update with the whole item must.
                let keepsID = withExtendedLifetime(changed.owners) { changed.item.plainID == keys[step.id].plainID }
                guard keepsID else { throw Self.invalid(operation, "changes", "an update cannot change the item's id") }
                blocks[found.block].rows?.replace(found.node, with: Row(key: id, text: .owned(changed.text)))
            }
        }
    }

    /// The `section` member of an item operation: the id of the section it names.
    private func sectionKey(_ range: Range<Int>, _ operation: KeyedOperation) throws(APIError) -> ItemKey {
        var scanner = JSONScanner(body.body.bytes, maxDepth: 8)
        scanner.position = range.lowerBound
        do {
            let value = try scanner.scanValue()
            return try ItemKey(value, in: scanner, at: operation.pointer.appending("section"))
        } catch let error as APIError {
            throw error
        } catch {
            throw .internalError("reading a section id failed with \(error)")
        }
    }
}
