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

    func apply(to held: [JSONItem], owners heldOwners: DocumentOwners, maxItems: Int) throws(APIError) -> EditOutcome {
        let resolved = try KeyedSteps(operations, body: body, reading: reading, sectioned: false)
        defer { withExtendedLifetime(resolved.keyOwners) {} }
        var edit = ChainEdit(held: held, keys: resolved.keys)
        let rewrittenOwners = try edit.run(resolved, body: body, reading: reading)
        // The documents of items that updates' `changes` rewrote are joined once, here:
        // joining each as it came copied the list of documents each time.
        let documents = heldOwners.merging(resolved.itemOwners).merging(rewrittenOwners)
        guard edit.chain.count <= maxItems else {
            throw APIError(
                .tooManyItems,
                message:
                    "a session holds at most \(maxItems) items (--max-session-items, LIVEDELTA_MAX_SESSION_ITEMS); this would make \(edit.chain.count)"
            )
        }
        let touchedKeys = edit.touched.indices.filter { edit.touched[$0] }
        let (list, positions) = edit.chain.materialize(finding: touchedKeys.compactMap { edit.node[$0] })
        let finish = EditFinish(reading: reading) { _ in operations.last?.pointer ?? JSONPointer("operations") }
        guard reading.options.unique else {
            let updated = touchedKeys.compactMap { key -> (old: Int, new: Int)? in
                guard !edit.reordered[key], let old = edit.oldIndex[key], let new = edit.node[key].flatMap({ positions[$0] }) else { return nil }
                return (old, new)
            }
            let renumbering = touchedKeys.filter { edit.reordered[$0] }.map { resolved.keys[edit.representative[$0]] }
            return try finish.flat(held: held, list: list, documents: documents, change: .repeated(renumbering: renumbering, updated: updated))
        }
        let touched = touchedKeys.map { key in
            let new = edit.node[key].flatMap { positions[$0] }
            let old = edit.oldIndex[key]
            return TouchedItem(old: old, new: new, changed: old.flatMap { old in new.map { held[old] != list[$0] } } ?? false)
        }
        return try finish.flat(held: held, list: list, documents: documents, change: .unique(touched: touched, unchecked: []))
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
        mutating func run(_ resolved: KeyedSteps, body: ChangeBody, reading: ChangeReading) throws(APIError) -> [DocumentOwners] {
            var rewrittenOwners: [DocumentOwners] = []
            var rewriteBudget = ChangeReading.maxRewrittenBytes
            for step in resolved.steps {
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
                    var item = try resolved.item(of: step, replacing: nil, body: body, reading: reading, budget: &rewriteBudget).item
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
                    let old = chain.element(current)
                    var (item, _, owners) = try resolved.item(of: step, replacing: old.text, body: body, reading: reading, budget: &rewriteBudget)
                    if let owners { rewrittenOwners.append(owners) }
                    item.occurrence = old.occurrence
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
        private func successor(of step: KeyedSteps.Step) throws(APIError) -> Int {
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
        private func shown(_ step: KeyedSteps.Step) -> String { keys[step.id].uniqueID.description }

        private static func absent(_ operation: KeyedOperation, _ member: String, _ message: String) -> APIError {
            APIError(.changeConflict, message: message, pointer: operation.pointer.appending(member).description)
        }
    }
}
