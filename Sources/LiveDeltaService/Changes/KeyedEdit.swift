import ByteJSON
import LiveCollections

/// Keyed operations on a session, flat or sectioned, as edits of lists of items: a flat
/// session is one such list; a sectioned one is a list of sections and a list of items for
/// each section an operation reaches (an item moved between sections leaves one list and joins
/// another). Every list is an overlay (`ListOverlay`) that costs the edits, not the list, and
/// the ids the operations name are found among the held items in one pass over their stored
/// hashes, comparing no text; in each list, the held items they name are nodes from the start.
/// `EditFinish` ends it: a flat list's delta follows from the items the operations touched;
/// sections an operation changed are written out and read again, and the others are the held
/// sections themselves.
struct KeyedEdit {
    let body: ChangeBody
    let operations: [KeyedOperation]
    let reading: ChangeReading

    func apply(to current: JSONCollection, maxItems: Int) throws(APIError) -> EditOutcome {
        let sectioned = if case .sectioned = current.shape { true } else { false }
        let resolved = try KeyedInstructions(operations, body: body, reading: reading, sectioned: sectioned)
        // Keys are only looked up, and the items read are copied where sections are written out:
        // their documents live as long as the edit (a flat list keeps the items' below).
        defer { withExtendedLifetime((resolved.keyOwners, resolved.itemOwners)) {} }
        var edit = KeyedLists(current, resolved: resolved, unique: reading.options.unique)
        var budget = ChangeReading.maxRewrittenBytes
        for instruction in resolved.instructions {
            try edit.run(instruction, body: body, reading: reading, budget: &budget)
        }
        let finish = EditFinish(reading: reading) { _ in operations.last?.pointer ?? JSONPointer("operations") }
        switch current.shape {
        case .sectioned(let sections):
            let result = try edit.sections(itemsKey: reading.options.itemsKeyBytes)
            return try withExtendedLifetime(edit.rewrittenOwners) { () throws(APIError) in
                try finish.sections(held: sections, result: result, owners: current.owners, checked: true)
            }
        case .flat(let items):
            let count = edit.lists[0].items?.count ?? 0
            guard count <= maxItems else {
                throw APIError(
                    .tooManyItems,
                    message: "a session holds at most \(maxItems) items (--max-session-items, LIVEDELTA_MAX_SESSION_ITEMS); this would make \(count)")
            }
            // The documents of items that updates' `changes` rewrote are joined once, here:
            // joining each as it came copied the list of documents each time.
            let documents = current.owners.merging(resolved.itemOwners).merging(edit.rewrittenOwners)
            let (list, change, copied) = edit.flat(held: items, unique: reading.options.unique)
            return try finish.flat(held: items, list: list, documents: documents, change: change, copied: copied)
        }
    }
}

/// The lists a keyed edit works on, and where each item it names is.
private struct KeyedLists {
    /// A flat session's items, or a section's.
    struct List {
        /// The section's id; nil for a flat session's one list.
        let key: JSONItemID?
        /// The section object its own fields come from (its items member is replaced by the
        /// list's items when it is written out).
        var section: LazyJSON
        /// The held list it began as; nil for a section an operation inserted.
        let origin: Int?
        /// Its items, once an operation has reached it; nil while they are the held ones.
        var items: ListOverlay<JSONItem>?
        /// The held section it still is, while no operation has changed it.
        var held: Int?
    }

    /// Where an item the instructions name is.
    enum Place {
        /// Where the pass over the held items found it (`heldPlace`), if it did and its list is
        /// still there.
        case held
        case at(list: Int, node: Int)
        case removed
    }

    let resolved: KeyedInstructions
    let sectioned: Bool
    let heldItems: [[JSONItem]]
    /// The lists, by uid: the held ones first, in their order, then those operations inserted.
    var lists: [List]
    /// The sections in the order the operations leave, as their lists' uids (node i for uid i).
    var order: ListOverlay<Int>
    /// The uid of each section in the session, by id.
    var sectionUID: [JSONItemID: Int] = [:]
    /// Each distinct item id the instructions name or insert, numbered: by key (-1 for a section's)
    /// and by item (the items of inserted sections; -1 for others).
    let keyNumber: [Int]
    let rowNumber: [Int]
    /// By number: the first key with the id, where it is, where it was, and whether an operation
    /// touched it (and an insert, move or remove renumbered it, where ids repeat).
    let representatives: [JSONItem]
    var place: [Place]
    let heldPlace: [(list: Int, row: Int)?]
    /// By held list: the items the instructions name in it, by row.
    let named: [[(row: Int, number: Int)]]
    var touched: [Bool]
    var reordered: [Bool]
    /// The documents of items that updates' `changes` rewrote.
    var rewrittenOwners: [DocumentOwners] = []

    init(_ current: JSONCollection, resolved: KeyedInstructions, unique: Bool) {
        switch current.shape {
        case .flat(let items):
            self.init(held: [items], sectioned: false, resolved: resolved, unique: unique)
            lists = [List(key: nil, section: .owned([]), origin: 0, items: nil, held: nil)]
            reach(0)
        case .sectioned(let sections):
            self.init(held: sections.map(\.items), sectioned: true, resolved: resolved, unique: unique)
            lists = sections.enumerated().map { index, section in
                List(key: section.uniqueID, section: .text(section.text), origin: index, items: nil, held: index)
            }
            sectionUID.reserveCapacity(lists.count)
            for (uid, list) in lists.enumerated() { if let key = list.key { sectionUID[key] = uid } }
        }
        order = ListOverlay(lists.indices)
    }

    private init(held: [[JSONItem]], sectioned: Bool, resolved: KeyedInstructions, unique: Bool) {
        self.resolved = resolved
        self.sectioned = sectioned
        heldItems = held
        lists = []
        order = ListOverlay([])
        (keyNumber, rowNumber, representatives) = Self.number(resolved, sectioned: sectioned, unique: unique)
        place = [Place](repeating: .held, count: representatives.count)
        touched = [Bool](repeating: false, count: representatives.count)
        reordered = touched
        heldPlace = Self.find(representatives, in: held)
        var named = [[(row: Int, number: Int)]](repeating: [], count: held.count)
        for (number, found) in heldPlace.enumerated() { if let found { named[found.list].append((found.row, number)) } }
        self.named = named.map { $0.sorted { $0.row < $1.row } }
    }

    /// Numbers the distinct item ids the instructions name (1 and 1.0 are one), and the keys of the
    /// items of the sections they insert.
    private static func number(
        _ resolved: KeyedInstructions, sectioned: Bool, unique: Bool
    ) -> (keys: [Int], rows: [Int], representatives: [JSONItem]) {
        var numbers = [JSONItemID: Int](minimumCapacity: resolved.keys.count)
        var representatives: [JSONItem] = []
        representatives.reserveCapacity(resolved.keys.count)
        func number(_ item: JSONItem) -> Int {
            let id = item.uniqueID
            if let known = numbers[id] { return known }
            numbers[id] = representatives.count
            representatives.append(item)
            return representatives.count - 1
        }
        // Every key is an item's but those naming sections; read in place, as copying an
        // instruction costs its operation's references.
        var isSection = [Bool](repeating: false, count: resolved.keys.count)
        var rows = [Int](repeating: -1, count: resolved.items.count)
        if sectioned {
            resolved.instructions.withUnsafeBufferPointer { instructions in
                for instruction in instructions.indices {
                    if instructions[instruction].operation.kind.onSection {
                        isSection[instructions[instruction].id] = true
                        if let before = instructions[instruction].before { isSection[before] = true }
                    }
                    if let section = instructions[instruction].section { isSection[section] = true }
                }
            }
        }
        var keys = [Int](repeating: -1, count: resolved.keys.count)
        resolved.keys.withUnsafeBufferPointer { all in
            for key in all.indices where !isSection[key] { keys[key] = number(all[key]) }
        }
        guard sectioned else { return (keys, rows, representatives) }
        for instruction in resolved.instructions where instruction.operation.kind == .insertSection {
            for (offset, index) in instruction.rows.enumerated() {
                if let rowKeys = instruction.rowKeys {
                    rows[index] = keys[rowKeys[offset]]
                } else {
                    var item = resolved.items[index]
                    item.occurrence = unique ? 0 : UInt32(offset + 1)
                    rows[index] = number(item)
                }
            }
        }
        return (keys, rows, representatives)
    }

    /// Where each of `items` is among the held ones, in one pass; a key (an id, and its
    /// occurrence where ids repeat) names one item at most, so the pass ends once each is found.
    /// Only a key that is not there (an insert's) costs the whole pass.
    private static func find(_ items: [JSONItem], in held: [[JSONItem]]) -> [(list: Int, row: Int)?] {
        var found = [(list: Int, row: Int)?](repeating: nil, count: items.count)
        guard !items.isEmpty else { return found }
        let finder = HashFinder(items)
        var missing = items.count
        for (list, items) in held.enumerated() {
            items.withUnsafeBufferPointer { items in
                for row in items.indices {
                    guard missing > 0, let number = finder.find(items[row]), found[number] == nil else { continue }
                    found[number] = (list, row)
                    missing -= 1
                }
            }
            if missing == 0 { break }
        }
        return found
    }

    // MARK: - Finding

    /// Whether list `uid` is in the session: a flat session's always is; a section, until an
    /// operation removes it.
    private func present(_ uid: Int) -> Bool {
        guard sectioned, let key = lists[uid].key else { return true }
        return sectionUID[key] == uid
    }

    /// Lists the items of list `uid` where no operation has reached it yet: the items the
    /// instructions name in it are its nodes, and found there from then on.
    private mutating func reach(_ uid: Int) {
        guard lists[uid].items == nil, let origin = lists[uid].origin else { return }
        let items = heldItems[origin]
        lists[uid].items = ListOverlay(heldCount: items.count, nodes: named[origin].map(\.row)) { items[$0] }
        for (node, item) in named[origin].enumerated() { place[item.number] = .at(list: uid, node: node) }
    }

    /// The item numbered `number`: its list (its items listed) and its node there.
    private mutating func find(_ number: Int) -> (list: Int, node: Int)? {
        switch place[number] {
        case .removed: return nil
        case .at(let list, let node): return present(list) ? (list, node) : nil
        case .held:
            guard let found = heldPlace[number], present(found.list) else { return nil }
            reach(found.list)
            guard case .at(let list, let node) = place[number] else { return nil }
            return (list, node)
        }
    }

    /// Whether two keys name one item (by number) or one section.
    private func sameKey(_ one: Int, _ other: Int, onSection: Bool) -> Bool {
        onSection ? resolved.keys[one].hasSameID(as: resolved.keys[other]) : keyNumber[one] == keyNumber[other]
    }

    private func shown(_ key: Int) -> String { resolved.keys[key].uniqueID.description }

    private static func conflict(_ operation: KeyedOperation, _ member: String, _ message: String) -> APIError {
        APIError(.changeConflict, message: message, pointer: operation.pointer.appending(member).description)
    }

    // MARK: - Instructions

    mutating func run(_ instruction: KeyedInstructions.Instruction, body: ChangeBody, reading: ChangeReading, budget: inout Int) throws(APIError) {
        let operation = instruction.operation
        if let before = instruction.before, sameKey(before, instruction.id, onSection: operation.kind.onSection) {
            throw APIError(.invalidOperation, message: "nothing goes before itself", pointer: operation.pointer.appending("before").description)
        }
        if operation.kind.onSection {
            try runOnSection(instruction, body: body, itemsKey: reading.options.itemsKey)
        } else {
            try runOnItem(instruction, body: body, reading: reading, budget: &budget)
            touched[keyNumber[instruction.id]] = true
            if operation.kind != .update { reordered[keyNumber[instruction.id]] = true }
        }
    }

    /// Where an item operation's item goes: its list and the node it goes before; nil where
    /// the operation names no section in a sectioned session.
    private mutating func target(of instruction: KeyedInstructions.Instruction) throws(APIError) -> (list: Int, before: Int?)? {
        let operation = instruction.operation
        var list = 0
        if let section = instruction.section {
            guard let uid = sectionUID[resolved.keys[section].uniqueID] else {
                throw Self.conflict(operation, "section", "there is no section \(shown(section))")
            }
            list = uid
            reach(uid)
        } else if sectioned {
            return nil
        }
        guard let before = instruction.before else { return (list, nil) }
        guard let place = find(keyNumber[before]), place.list == list else {
            let within = sectioned ? "that section" : "the list"
            throw Self.conflict(operation, "before", "before names \(shown(before)), which is not in \(within)")
        }
        return (list, place.node)
    }

    /// insert, move, remove, update.
    private mutating func runOnItem(_ instruction: KeyedInstructions.Instruction, body: ChangeBody, reading: ChangeReading, budget: inout Int)
        throws(APIError)
    {
        let operation = instruction.operation
        let number = keyNumber[instruction.id]
        let found = find(number)
        let target = try target(of: instruction)
        switch operation.kind {
        case .insert:
            guard found == nil else {
                throw APIError(
                    .duplicateID, message: "the list already holds an item with the id \(shown(instruction.id))",
                    pointer: operation.pointer.appending("id").description)
            }
            guard let target else { throw .internalError("an insert without its section was resolved") }
            var item = try resolved.item(of: instruction, replacing: nil, body: body, reading: reading, budget: &budget).item
            item.occurrence = resolved.keys[instruction.id].occurrence
            place[number] = .at(list: target.list, node: try add(item, to: target))
        case .move:
            guard let found, let target else { throw Self.conflict(operation, "id", "there is no item \(shown(instruction.id)) to move") }
            guard let item = lists[found.list].items?[found.node] else { throw .internalError("a found item was not listed") }
            lists[found.list].items?.remove(found.node)
            lists[found.list].held = nil
            if target.list == found.list {
                lists[found.list].items?.insert(found.node, before: target.before)
            } else {
                place[number] = .at(list: target.list, node: try add(item, to: target))
            }
        case .remove:
            guard let found else { throw Self.conflict(operation, "id", "there is no item \(shown(instruction.id)) to remove") }
            lists[found.list].items?.remove(found.node)
            lists[found.list].held = nil
            place[number] = .removed
        default:
            guard let found, let old = lists[found.list].items?[found.node] else {
                throw Self.conflict(operation, "id", "there is no item \(shown(instruction.id)) to update")
            }
            var (item, owners) = try resolved.item(of: instruction, replacing: old.text, body: body, reading: reading, budget: &budget)
            if let owners { rewrittenOwners.append(owners) }
            item.occurrence = old.occurrence
            lists[found.list].items?.replace(found.node, with: item)
            lists[found.list].held = nil
        }
    }

    /// Puts `item` in a list, before a node; answers its node.
    private mutating func add(_ item: JSONItem, to target: (list: Int, before: Int?)) throws(APIError) -> Int {
        lists[target.list].held = nil
        guard let node = lists[target.list].items?.add(item), lists[target.list].items?.insert(node, before: target.before) == true else {
            throw .internalError("a reached list has no items")
        }
        return node
    }

    /// insertSection, updateSection, moveSection, removeSection.
    private mutating func runOnSection(_ instruction: KeyedInstructions.Instruction, body: ChangeBody, itemsKey: String) throws(APIError) {
        let operation = instruction.operation
        let id = resolved.keys[instruction.id].uniqueID
        let found = sectionUID[id]
        var successor: Int?
        if let before = instruction.before {
            guard let uid = sectionUID[resolved.keys[before].uniqueID] else {
                throw Self.conflict(operation, "before", "before names the section \(shown(before)), which is not in the list")
            }
            successor = uid
        }
        switch operation.kind {
        case .removeSection:
            guard let found else { throw Self.conflict(operation, "id", "there is no section \(id.description) to remove") }
            order.remove(found)
            sectionUID[id] = nil
        case .moveSection:
            guard let found else { throw Self.conflict(operation, "id", "there is no section \(id.description) to move") }
            order.remove(found)
            order.insert(found, before: successor)
        case .updateSection:
            guard let found, let range = operation.section else {
                throw Self.conflict(operation, "id", "there is no section \(id.description) to update")
            }
            reach(found)
            lists[found].section = .text(body.text(range))
            lists[found].held = nil
        default:
            guard sectionUID[id] == nil else {
                throw APIError(
                    .duplicateID, message: "there is already a section \(id.description)", pointer: operation.pointer.appending("id").description)
            }
            guard let range = operation.section else { throw .internalError("an insertSection without its section was read") }
            let uid = order.add(lists.count)
            lists.append(
                List(
                    key: id, section: .text(body.text(range)), origin: nil, items: ListOverlay(try rows(of: instruction, itemsKey: itemsKey)),
                    held: nil
                ))
            for (node, index) in instruction.rows.enumerated() { place[rowNumber[index]] = .at(list: uid, node: node) }
            order.insert(uid, before: successor)
            sectionUID[id] = uid
        }
    }

    /// The items of a section an operation inserts, each with the occurrence its key says;
    /// refused where one has the id of an item in the session or of another of them.
    private mutating func rows(of instruction: KeyedInstructions.Instruction, itemsKey: String) throws(APIError) -> [JSONItem] {
        var rows: [JSONItem] = []
        var numbers = Set<Int>()
        for (offset, index) in instruction.rows.enumerated() {
            let number = rowNumber[index]
            if find(number) != nil || !numbers.insert(number).inserted {
                throw APIError(
                    .duplicateID, message: "the list already holds an item \(representatives[number].uniqueID.description)",
                    pointer: instruction.operation.pointer.appending("section").appending(itemsKey).appending(offset).description)
            }
            var item = resolved.items[index]
            item.occurrence = representatives[number].occurrence
            rows.append(item)
        }
        return rows
    }

    // MARK: - Results

    /// The sections the operations leave: the held ones they did not change, and the others
    /// with their items at the end (wherever they had them), to be written out.
    func sections(itemsKey: [UInt8]) throws(APIError) -> [EditFinish.Section] {
        try order.map { uid throws(APIError) -> EditFinish.Section in
            let list = lists[uid]
            if let held = list.held { return .held(held) }
            var section = list.section
            section.open()
            guard case .object(var members) = section else { throw .internalError("a section is not an object") }
            _ = members.remove(itemsKey)
            members.append(itemsKey, .array(ListOverlay(list.items?.map { LazyJSON.text($0.text) } ?? [])))
            return .written(.object(members))
        }
    }

    /// A flat session's list after the operations, and what they did to it (`held`) for its
    /// delta: where each item they touched was and is, and where ids repeat, the ids whose items
    /// an insert, move or remove renumbered; and the runs of held items it copied as they were.
    func flat(held: [JSONItem], unique: Bool) -> (list: [JSONItem], change: EditFinish.FlatChange, copied: [CopiedRun]) {
        let overlay = lists[0].items ?? ListOverlay(heldCount: held.count) { held[$0] }
        let numbers = touched.indices.filter { touched[$0] }
        // The list, runs of held items copied whole, and where each node stands in it.
        // In the storage of an older list where one is free (a long session's: see
        // ItemListSpares), not in memory mapped afresh.
        var list = ItemListSpares.shared.emptyList(capacity: overlay.count)
        var positions = [Int](repeating: -1, count: overlay.elements.count)
        var copied: [CopiedRun] = []
        for piece in overlay.pieces {
            switch piece {
            case .held(let run):
                copied.append(CopiedRun(old: run.lowerBound, new: list.count, count: run.count))
                list.append(contentsOf: held[run])
            case .node(let node):
                positions[node] = list.count
                list.append(overlay[node])
            }
        }
        ItemListSpares.shared.watch(list)
        /// Where the item numbered `number` is now (every item an instruction names is a node).
        func now(_ number: Int) -> Int? {
            guard case .at(_, let node) = place[number], positions[node] >= 0 else { return nil }
            return positions[node]
        }
        guard unique else {
            let updated = numbers.compactMap { number -> (old: Int, new: Int)? in
                guard !reordered[number], let old = heldPlace[number]?.row, let new = now(number) else { return nil }
                return (old, new)
            }
            return (list, .repeated(renumbering: numbers.filter { reordered[$0] }.map { representatives[$0] }, updated: updated), copied)
        }
        let items = numbers.map { number in
            let (old, new) = (heldPlace[number]?.row, now(number))
            return TouchedItem(old: old, new: new, changed: old.flatMap { old in new.map { held[old] != list[$0] } } ?? false)
        }
        return (list, .unique(touched: items, unchecked: []), copied)
    }
}
