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

    /// Documents beyond this many make the edit write the session anew into one (each change
    /// otherwise adds its items' text to the documents the session keeps). Rewriting costs the
    /// list, so it should come seldom: a document's bookkeeping is small beside that.
    static let maxDocuments = 1_024

    func apply(to held: [JSONItem], owners heldOwners: DocumentOwners, maxItems: Int) throws(APIError) -> EditOutcome {
        let unique = reading.options.unique
        // The keys the operations name, read as ids, and the items they carry.
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
        var steps: [(operation: KeyedOperation, id: Int, before: Int?, item: Int?)] = []
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
            steps.append((operation, id, before, item))
        }
        let (keys, keyOwners) = try named.read(with: reading)
        let (items, itemOwners) = try reading.items(itemTexts, origins: itemOrigins)
        // The keys are only looked up: their document lives as long as this edit, not the session.
        defer { withExtendedLifetime(keyOwners) {} }
        var documents = heldOwners.merging(itemOwners)
        /// The documents of items that updates' `changes` rewrote, joined once after the
        /// operations: joining each as it comes copied the list of documents each time.
        var rewrittenOwners: [DocumentOwners] = []

        // Each distinct key once: 1 and 1.0 name one item.
        var canonical = [JSONItemID: Int]()
        let keyIndex = keys.map { key in
            let id = key.uniqueID
            if let known = canonical[id] { return known }
            canonical[id] = canonical.count
            return canonical.count - 1
        }
        var representative = [Int](repeating: 0, count: canonical.count)
        for (position, index) in keyIndex.enumerated().reversed() { representative[index] = position }
        // Where each key's item is among the held ones, in one pass; a key (an id, and its
        // occurrence where ids repeat) names one item at most, so the pass ends once each is
        // found. Only a key that is not there (an insert's) costs the whole pass.
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
        let oldIndex = node

        var chain = ItemChain(held)
        var touched = [Bool](repeating: false, count: canonical.count)
        /// Keys an insert, move or remove named: where ids repeat, these renumber their id's items.
        var reordered = [Bool](repeating: false, count: canonical.count)
        var rewriteBudget = ChangeReading.maxRewrittenBytes
        for step in steps {
            let operation = step.operation
            let id = keyIndex[step.id]
            // Spelled only for a refusal: building an id's description costs a string a step.
            func shown() -> String { keys[step.id].uniqueID.description }
            func absent(_ member: String, _ message: String) -> APIError {
                APIError(.changeConflict, message: message, pointer: operation.pointer.appending(member).description)
            }
            var successor = ItemChain<JSONItem>.tail
            if let before = step.before {
                guard keyIndex[before] != id else {
                    throw APIError(
                        .invalidOperation, message: "an item cannot go before itself", pointer: operation.pointer.appending("before").description)
                }
                guard let found = node[keyIndex[before]] else {
                    throw absent("before", "before names \(keys[before].uniqueID.description), which is not in the list")
                }
                successor = found
            }
            switch operation.kind {
            case .insert:
                guard node[id] == nil else {
                    throw APIError(
                        .duplicateID, message: "the list already holds an item with the id \(shown())",
                        pointer: operation.pointer.appending("id").description)
                }
                var item = items[step.item ?? 0]
                guard item.plainID == keys[step.id].plainID else {
                    throw APIError(
                        .invalidOperation, message: "the item's id is not the operation's id \(shown())",
                        pointer: operation.pointer.appending("item").description)
                }
                item.occurrence = keys[step.id].occurrence
                let added = chain.add(item)
                chain.link(added, before: successor)
                node[id] = added
            case .move:
                guard let current = node[id] else { throw absent("id", "there is no item \(shown()) to move") }
                chain.unlink(current)
                chain.link(current, before: successor)
            case .remove:
                guard let current = node[id] else { throw absent("id", "there is no item \(shown()) to remove") }
                chain.unlink(current)
                node[id] = nil
            case .update:
                guard let current = node[id] else { throw absent("id", "there is no item \(shown()) to update") }
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
                        .invalidOperation, message: "an update cannot change the item's id \(shown())",
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
        documents = documents.merging(rewrittenOwners)
        guard chain.count <= maxItems else {
            throw APIError(
                .tooManyItems,
                message:
                    "a session holds at most \(maxItems) items (--max-session-items, LIVEDELTA_MAX_SESSION_ITEMS); this would make \(chain.count)")
        }
        let touchedKeys = touched.indices.filter { touched[$0] }
        var (list, positions) = chain.materialize(finding: touchedKeys.compactMap { node[$0] })
        let policy = reading.options.policy
        if unique, documents.count <= Self.maxDocuments,
            let delta = IndexDelta(
                oldCount: held.count, newCount: list.count,
                touched: touchedKeys.map { key in
                    let new = node[key].flatMap { positions[$0] }
                    let old = oldIndex[key]
                    return TouchedItem(old: old, new: new, changed: old.flatMap { old in new.map { held[old] != list[$0] } } ?? false)
                })
        {
            return .flat(list, owners: documents, delta: policy.animated(delta, oldCount: held.count, newCount: list.count))
        }
        if !unique, documents.count <= Self.maxDocuments {
            let updated = touchedKeys.compactMap { key -> (old: Int, new: Int)? in
                guard !reordered[key], let old = oldIndex[key], let new = node[key].flatMap({ positions[$0] }) else { return nil }
                return (old, new)
            }
            let affected = touchedKeys.filter { reordered[$0] }.map { keys[representative[$0]] }
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
        if documents.count > Self.maxDocuments {
            return .collection(try reading.collection(encoded: SessionCodec.encode(.flat(renumbered, owners: documents)), sectioned: false))
        }
        return .collection(.flat(renumbered, owners: documents))
    }
}
