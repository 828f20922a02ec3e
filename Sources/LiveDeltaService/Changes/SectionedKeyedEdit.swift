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

    func apply(to sections: [JSONSection], owners: DocumentOwners) throws(APIError) -> EditOutcome {
        let resolved = try KeyedSteps(operations, body: body, reading: reading, sectioned: true)
        defer { withExtendedLifetime((resolved.keyOwners, resolved.itemOwners)) {} }
        var edit = BlockEdit(sections: sections, resolved: resolved, unique: reading.options.unique)
        var rewriteBudget = ChangeReading.maxRewrittenBytes
        for step in resolved.steps {
            let operation = step.operation
            if let before = step.before, edit.ids[before] == edit.ids[step.id] {
                throw APIError(.invalidOperation, message: "nothing goes before itself", pointer: operation.pointer.appending("before").description)
            }
            if operation.kind.onSection {
                try edit.runOnSection(step, body: body, itemsKey: reading.options.itemsKey)
            } else {
                try edit.runOnItem(step, body: body, reading: reading, budget: &rewriteBudget)
            }
        }
        // Each section the operations changed is written out (its items member, wherever it
        // was, at the end) and read again; the others are the held sections themselves.
        let result = try edit.order.materialize(finding: []).elements.map { uid throws(APIError) -> EditFinish.Section in
            let block = edit.blocks[uid]
            if let held = block.held { return .held(held) }
            var section = block.section
            section.open()
            guard case .object(var members) = section else { throw .internalError("a section is not an object") }
            _ = members.remove(reading.options.itemsKeyBytes)
            let rows = block.rows?.materialize(finding: []).elements ?? []
            members.append(reading.options.itemsKeyBytes, .array(ChunkedList(rows.lazy.map(\.text))))
            return .written(.object(members))
        }
        // No item written has the id of one in a kept section: inserts were checked against
        // all, and updates keep their ids.
        let finish = EditFinish(reading: reading) { _ in operations.last?.pointer ?? JSONPointer("operations") }
        return try finish.sections(held: sections, result: result, owners: owners, checked: true)
    }

    /// The held sections under the operations: blocks (a section each, its rows listed once an
    /// operation reaches it) in an order kept as a chain, and where the named items are.
    private struct BlockEdit {
        let sections: [JSONSection]
        let unique: Bool
        let resolved: KeyedSteps
        /// Each key's id, by its index in `resolved.keys`.
        let ids: [JSONItemID]
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

        init(sections: [JSONSection], resolved: KeyedSteps, unique: Bool) {
            self.sections = sections
            self.unique = unique
            self.resolved = resolved
            ids = resolved.keys.map(\.uniqueID)
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
            let probes = resolved.keys + resolved.items
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
            var item = resolved.items[index]
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
        mutating func runOnSection(_ step: KeyedSteps.Step, body: ChangeBody, itemsKey: String) throws(APIError) {
            let operation = step.operation
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
                try insertSection(step, at: place, body: body, itemsKey: itemsKey)
            }
        }

        private mutating func insertSection(_ step: KeyedSteps.Step, at place: Int, body: ChangeBody, itemsKey: String) throws(APIError) {
            let operation = step.operation
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
                rows.append(Row(key: key, text: .text(resolved.itemTexts[index])))
            }
            let uid = order.add(blocks.count)
            blocks.append(Block(uid: uid, key: id, section: .text(body.text(range)), origin: nil, rows: ItemChain(rows), held: nil))
            order.link(uid, before: place)
            sectionUID[id] = uid
            for (node, row) in rows.enumerated() { placed[row.key] = .at(block: uid, node: node) }
        }

        /// Where an item operation's item goes: its section's block and the node it goes
        /// before; nil where the operation names no section.
        private mutating func target(of step: KeyedSteps.Step) throws(APIError) -> (block: Int, before: Int)? {
            let operation = step.operation
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
        mutating func runOnItem(_ step: KeyedSteps.Step, body: ChangeBody, reading: ChangeReading, budget: inout Int) throws(APIError) {
            let operation = step.operation
            let id = ids[step.id]
            let found = findItem(id)
            let target = try target(of: step)
            switch operation.kind {
            case .insert:
                guard found == nil else {
                    throw APIError(
                        .duplicateID, message: "the list already holds an item \(id.description)",
                        pointer: operation.pointer.appending("id").description)
                }
                guard let target else { throw Self.invalid(operation, "item", "insert needs the item and its section") }
                let text = try resolved.item(of: step, replacing: nil, body: body, reading: reading, budget: &budget).text
                guard let node = blocks[target.block].rows?.add(Row(key: id, text: text)) else {
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
                guard let found, let old = blocks[found.block].rows?.element(found.node).text.bytes else {
                    throw Self.conflict(operation, "id", "there is no item \(id.description) to update")
                }
                let text = try old.withUnsafeBufferPointer { old throws(APIError) in
                    try resolved.item(of: step, replacing: old, body: body, reading: reading, budget: &budget).text
                }
                blocks[found.block].held = nil
                blocks[found.block].rows?.replace(found.node, with: Row(key: id, text: text))
            }
        }
    }
}
