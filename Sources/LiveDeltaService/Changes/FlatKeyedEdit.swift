import LiveCollections

/// Keyed operations on a flat session, applied one after another on an `ItemChain`: the cost is
/// one pass that finds the named ids among the held items (comparing their stored hashes, not
/// reading their text), one copy of the list, and the operations themselves. The delta follows
/// from the items the operations touched (`Delta(oldCount:…)`), with no diff of the whole lists;
/// where ids repeat, also from the items an insert, move or remove renumbered
/// (`occurrenceDelta`).
struct FlatKeyedEdit {
    let body: ChangeBody
    let operations: [KeyedOperation]
    let reading: ChangeReading

    /// An operation resolved against the edit's keys and items: indices into them.
    private struct Step {
        let operation: KeyedOperation
        let id: Int
        let before: Int?
        let item: Int?
    }

    /// What the operations name, read once: their keys as ids, the items they carry, and the
    /// documents both point into.
    private struct Named {
        var keys: [JSONItem]
        var keyOwners: DocumentOwners
        var items: [JSONItem]
        var itemOwners: DocumentOwners
        var steps: [Step]
    }

    func apply(to held: [JSONItem], owners heldOwners: DocumentOwners, maxItems: Int) throws(APIError) -> EditOutcome {
        let named = try resolve()
        // The keys are only looked up: their document lives as long as this edit, not the session.
        defer { withExtendedLifetime(named.keyOwners) {} }
        var edit = ChainEdit(held: held, keys: named.keys)
        let rewrittenOwners = try edit.run(named.steps, items: named.items, body: body, reading: reading)
        // The documents of items that updates' `changes` rewrote are joined once, here:
        // joining each as it came copied the list of documents each time.
        let documents = heldOwners.merging(named.itemOwners).merging(rewrittenOwners)
        guard edit.chain.count <= maxItems else {
            throw APIError(
                .tooManyItems,
                message:
                    "a session holds at most \(maxItems) items (--max-session-items, LIVEDELTA_MAX_SESSION_ITEMS); this would make \(edit.chain.count)"
            )
        }
        return try finish(edit, held: held, keys: named.keys, documents: documents)
    }

    /// Reads the operations' keys and items, refusing what a flat session cannot take.
    private func resolve() throws(APIError) -> Named {
        let unique = reading.options.unique
        var named = NamedKeys()
        func key(_ key: ItemKey) throws(APIError) -> Int {
            if unique, key.occurrence != nil {
                throw APIError(
                    .invalidOperation, message: "this session's ids are unique: an item's key is its id, with no occurrence",
                    pointer: key.pointer.description)
            }
            return named.add(key, in: body, occurrence: unique ? 0 : key.occurrence ?? 1)
        }
        var itemTexts: [UnsafeBufferPointer<UInt8>] = []
        var itemOrigins: [JSONPointer] = []
        var steps: [Step] = []
        for operation in operations {
            if operation.kind.onSection {
                throw APIError(
                    .invalidOperation, message: "this session holds a flat list: \(operation.kind.rawValue) needs a sectioned session",
                    pointer: operation.pointer.appending("op").description)
            }
            if operation.section != nil {
                throw APIError(
                    .invalidOperation, message: "this session holds a flat list: items name no section",
                    pointer: operation.pointer.appending("section").description)
            }
            let id = try key(operation.id)
            var before: Int?
            if case .before(let place) = operation.place { before = try key(place) }
            var item: Int?
            if let range = operation.item {
                itemTexts.append(body.text(range))
                itemOrigins.append(operation.pointer.appending("item"))
                item = itemTexts.count - 1
            }
            steps.append(Step(operation: operation, id: id, before: before, item: item))
        }
        let (keys, keyOwners) = try named.read(with: reading)
        let (items, itemOwners) = try reading.items(itemTexts, origins: itemOrigins)
        return Named(keys: keys, keyOwners: keyOwners, items: items, itemOwners: itemOwners, steps: steps)
    }

    /// The list after the edit, with its delta worked out from the items it touched where it
    /// can be, else the whole collection to be diffed; written anew past `SessionRewrite`'s
    /// bound.
    private func finish(_ edit: ChainEdit, held: [JSONItem], keys: [JSONItem], documents: DocumentOwners) throws(APIError) -> EditOutcome {
        let unique = reading.options.unique
        let touchedKeys = edit.touched.indices.filter { edit.touched[$0] }
        var (list, positions) = edit.chain.materialize(finding: touchedKeys.compactMap { edit.node[$0] })
        let policy = reading.options.policy
        let keepsHeld = SessionRewrite.keepsHeld(documents: documents.count)
        if unique, keepsHeld,
            let delta = IndexDelta(
                oldCount: held.count, newCount: list.count,
                touched: touchedKeys.map { key in
                    let new = edit.node[key].flatMap { positions[$0] }
                    let old = edit.oldIndex[key]
                    return TouchedItem(old: old, new: new, changed: old.flatMap { old in new.map { held[old] != list[$0] } } ?? false)
                })
        {
            return .flat(list, owners: documents, delta: policy.animated(delta, oldCount: held.count, newCount: list.count))
        }
        if !unique, keepsHeld {
            let updated = touchedKeys.compactMap { key -> (old: Int, new: Int)? in
                guard !edit.reordered[key], let old = edit.oldIndex[key], let new = edit.node[key].flatMap({ positions[$0] }) else { return nil }
                return (old, new)
            }
            let affected = touchedKeys.filter { edit.reordered[$0] }.map { keys[edit.representative[$0]] }
            // Renumbered in place: where this answers nil, every item is numbered again below.
            if let delta = Self.occurrenceDelta(held: held, list: &list, affected: affected, updated: updated) {
                return .flat(list, owners: documents, delta: policy.animated(delta, oldCount: held.count, newCount: list.count))
            }
        }
        var renumbered = list
        if !unique {
            var seen = [JSONItemID: UInt32]()
            numberOccurrences(&renumbered, seen: &seen)
        }
        if !keepsHeld {
            return .collection(try reading.collection(encoded: SessionCodec.encode(.flat(renumbered, owners: documents)), sectioned: false))
        }
        return .collection(.flat(renumbered, owners: documents))
    }

    /// The held list under the operations: an `ItemChain`, and where each distinct key's item
    /// is in it.
    private struct ChainEdit {
        var chain: ItemChain<JSONItem>
        let keys: [JSONItem]
        /// Each key's distinct id, by key: 1 and 1.0 name one item.
        let keyIndex: [Int]
        /// The first key of each distinct id.
        let representative: [Int]
        /// Each distinct id's node in the chain; nil where it is not in the list.
        var node: [Int?]
        /// Where each distinct id's item was in the held list.
        let oldIndex: [Int?]
        var touched: [Bool]
        /// Ids an insert, move or remove named: where ids repeat, these renumber their items.
        var reordered: [Bool]

        init(held: [JSONItem], keys: [JSONItem]) {
            self.keys = keys
            var canonical = [JSONItemID: Int]()
            keyIndex = keys.map { key in
                let id = key.uniqueID
                if let known = canonical[id] { return known }
                canonical[id] = canonical.count
                return canonical.count - 1
            }
            var representative = [Int](repeating: 0, count: canonical.count)
            for (position, index) in keyIndex.enumerated().reversed() { representative[index] = position }
            self.representative = representative
            // Where each key's item is among the held ones, in one pass; a key (an id, and its
            // occurrence where ids repeat) names one item at most, so the pass ends once each
            // is found. Only a key that is not there (an insert's) costs the whole pass.
            var node = [Int?](repeating: nil, count: canonical.count)
            let finder = HashFinder(representative.map { keys[$0] })
            held.withUnsafeBufferPointer { held in
                var missing = canonical.count
                for index in held.indices {
                    guard let found = finder.find(held[index]), node[found] == nil else { continue }
                    node[found] = index
                    missing -= 1
                    if missing == 0 { break }
                }
            }
            self.node = node
            oldIndex = node
            chain = ItemChain(held)
            touched = [Bool](repeating: false, count: canonical.count)
            reordered = touched
        }

        /// Runs the steps on the chain; answers the documents of the items updates' `changes`
        /// rewrote.
        mutating func run(_ steps: [Step], items: [JSONItem], body: ChangeBody, reading: ChangeReading) throws(APIError) -> [DocumentOwners] {
            var rewrittenOwners: [DocumentOwners] = []
            var rewriteBudget = ChangeReading.maxRewrittenBytes
            for step in steps {
                let operation = step.operation
                let id = keyIndex[step.id]
                let successor = try self.successor(of: step)
                switch operation.kind {
                case .insert:
                    guard node[id] == nil else {
                        throw APIError(
                            .duplicateID, message: "the list already holds an item with the id \(shown(step))",
                            pointer: operation.pointer.appending("id").description)
                    }
                    var item = items[step.item ?? 0]
                    guard item.plainID == keys[step.id].plainID else {
                        throw APIError(
                            .invalidOperation, message: "the item's id is not the operation's id \(shown(step))",
                            pointer: operation.pointer.appending("item").description)
                    }
                    item.occurrence = keys[step.id].occurrence
                    let added = chain.add(item)
                    chain.link(added, before: successor)
                    node[id] = added
                case .move:
                    guard let current = node[id] else { throw Self.absent(operation, "id", "there is no item \(shown(step)) to move") }
                    chain.unlink(current)
                    chain.link(current, before: successor)
                case .remove:
                    guard let current = node[id] else { throw Self.absent(operation, "id", "there is no item \(shown(step)) to remove") }
                    chain.unlink(current)
                    node[id] = nil
                case .update:
                    guard let current = node[id] else { throw Self.absent(operation, "id", "there is no item \(shown(step)) to update") }
                    var item: JSONItem
                    if let index = step.item {
                        item = items[index]
                    } else {
                        guard let changes = operation.changes else { throw .internalError("an update with neither item nor changes was read") }
                        let changed = try reading.item(
                            chain.element(current).text, changedBy: changes, body: body.body.bytes, origin: operation.pointer.appending("changes"),
                            budget: &rewriteBudget)
                        rewrittenOwners.append(changed.owners)
                        item = changed.item
                    }
                    guard item.plainID == chain.element(current).plainID else {
                        throw APIError(
                            .invalidOperation, message: "an update cannot change the item's id \(shown(step))",
                            pointer: operation.pointer.appending(step.item == nil ? "changes" : "item").description)
                    }
                    item.occurrence = chain.element(current).occurrence
                    chain.replace(current, with: item)
                case .insertSection, .updateSection, .moveSection, .removeSection:
                    throw .internalError("a section operation reached a flat list")
                }
                touched[id] = true
                if operation.kind != .update { reordered[id] = true }
            }
            return rewrittenOwners
        }

        /// The node a step's item goes before (`tail`: the end).
        private func successor(of step: Step) throws(APIError) -> Int {
            guard let before = step.before else { return ItemChain<JSONItem>.tail }
            guard keyIndex[before] != keyIndex[step.id] else {
                throw APIError(
                    .invalidOperation, message: "an item cannot go before itself", pointer: step.operation.pointer.appending("before").description)
            }
            guard let found = node[keyIndex[before]] else {
                throw Self.absent(step.operation, "before", "before names \(keys[before].uniqueID.description), which is not in the list")
            }
            return found
        }

        /// Spelled only for a refusal: building an id's description costs a string a step.
        private func shown(_ step: Step) -> String { keys[step.id].uniqueID.description }

        private static func absent(_ operation: KeyedOperation, _ member: String, _ message: String) -> APIError {
            APIError(.changeConflict, message: message, pointer: operation.pointer.appending(member).description)
        }
    }
}
