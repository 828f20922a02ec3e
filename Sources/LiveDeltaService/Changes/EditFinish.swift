import ByteJSON
import LiveCollections

/// The last stage of every edit, keyed or patch, flat or sectioned: it owns what the result must
/// be (ids unique where the session says so, occurrences numbered where ids repeat), when the
/// session is written anew into one document (`SessionRewrite`), and the delta: worked out
/// from what the edit touched where it can be, else the result is handed on whole to be
/// diffed as an update would be.
struct EditFinish {
    let reading: ChangeReading
    /// The operation a refusal about the result's item (flat) or section (sectioned) at a
    /// place is put on.
    let blame: (Int) -> JSONPointer

    /// What an edit did to a flat list, for its delta.
    enum FlatChange {
        /// Ids are unique: the items it touched, and those it wrote whose ids nothing checked
        /// against the others' (a patch's; a keyed insert checks its own).
        case unique(touched: [TouchedItem], unchecked: [JSONItem])
        /// Ids repeat: items with the ids an insert, move or remove named, whose items it
        /// renumbers; and the items it only updated, where they were and are.
        case repeated(renumbering: [JSONItem], updated: [(old: Int, new: Int)])
    }

    /// A section of an edit's result.
    enum Section {
        /// The held section at this index, as it was, items and all.
        case held(Int)
        /// A section the edit made or changed, to be read.
        case written(LazyJSON)
    }

    // MARK: - Flat

    /// The flat `list` an edit left of `held`, its items pointing into `documents`.
    func flat(
        held: [JSONItem], list: [JSONItem], documents: DocumentOwners, change: FlatChange, copied: [CopiedRun] = []
    ) throws(APIError) -> EditOutcome {
        var list = list
        let keepsHeld = SessionRewrite.keepsHeld(documents: documents.count)
        let policy = reading.options.policy
        switch change {
        case .unique(let touched, let unchecked):
            try checkUnique(list, suspects: unchecked)
            if keepsHeld, let delta = IndexDelta(oldCount: held.count, newCount: list.count, touched: touched) {
                return .flat(list, owners: documents, delta: policy.animated(delta, oldCount: held.count, newCount: list.count), copied: copied)
            }
        case .repeated(let renumbering, let updated):
            // Renumbered in place: where this answers nil, every item is numbered again below.
            if keepsHeld, let delta = Self.occurrenceDelta(held: held, list: &list, affected: renumbering, updated: updated) {
                return .flat(list, owners: documents, delta: policy.animated(delta, oldCount: held.count, newCount: list.count), copied: copied)
            }
            var seen = [JSONItemID: UInt32]()
            numberOccurrences(&list, seen: &seen)
        }
        guard keepsHeld else {
            return .collection(try reading.collection(encoded: SessionCodec.encode(.flat(list, owners: documents)), sectioned: false))
        }
        return .collection(.flat(list, owners: documents))
    }

    /// Refuses a flat result that holds an id twice, as matching the whole list would (the
    /// repeat that comes first), looking closely only at the items whose id is one of
    /// `suspects`': every repeat involves one of them, as the held items' ids were distinct.
    private func checkUnique(_ list: [JSONItem], suspects: [JSONItem]) throws(APIError) {
        guard !suspects.isEmpty else { return }
        let finder = HashFinder(suspects)
        var first: [JSONItemID: Int] = [:]
        for position in list.indices where finder.find(list[position]) != nil {
            let id = list[position].uniqueID
            if let earlier = first[id] {
                throw repeated(id: "\(id)", first: "/\(earlier)", second: "/\(position)", at: blame(position), section: false)
            }
            first[id] = position
        }
    }

    // MARK: - Sectioned

    /// The sections an edit left of `held`, whose items point into `owners`. The held sections kept
    /// are as they were, so where ids are unique only the written ones are read, and the delta is
    /// the diff of the sections and of the written sections' items alone, unless a held section is
    /// kept twice or (where `checked` is false) an item written has the id of one in a kept
    /// section: that result is diffed whole. Where ids repeat, their occurrences count across
    /// sections, and every section is read again; so is every section past the rewrite bound. A
    /// result read whole has its ids checked, unless `checked` says the edit checked every id it
    /// wrote against the session's (a keyed edit does). `place`, where given, says where a written
    /// section stands in the session for a refusal's message (see `ChangeReading.moved`).
    func sections(
        held: [JSONSection], result elements: [Section], owners: DocumentOwners, checked: Bool, place: ((Int) -> Int)? = nil
    ) throws(APIError) -> EditOutcome {
        let keepsHeld = reading.options.unique && SessionRewrite.keepsHeld(adding: owners)
        let written = keepsHeld ? elements.indices.filter { if case .written = elements[$0] { true } else { false } } : Array(elements.indices)
        var writer = JSONWriter()
        writer.raw("{\"sections\":[")
        for (count, position) in written.enumerated() {
            if count > 0 { writer.raw(",") }
            switch elements[position] {
            case .held(let index): writer.raw(held[index].text)
            case .written(let section): section.write(&writer)
            }
        }
        writer.raw("]}")
        let read = try reading.collection(
            encoded: writer.bytes, sectioned: true, origin: { blame(written[$0]) }, place: place.map { place in { place(written[$0]) } })
        guard keepsHeld else {
            if !checked { try checkUnique(read) }
            return .collection(read)
        }
        guard case .sectioned(let sections) = read.shape, sections.count == written.count else {
            throw .internalError("the written sections were not read back")
        }
        var next = sections.makeIterator()
        let result = elements.compactMap { element -> JSONSection? in if case .held(let index) = element { held[index] } else { next.next() } }
        let collection = JSONCollection.sectioned(result, owners: owners.merging(read.owners))
        let kept = elements.compactMap { element -> Int? in if case .held(let index) = element { index } else { nil } }
        let keptOld = Set(kept)
        if keptOld.count == kept.count, checked || !Self.anyID(of: written.flatMap { result[$0].items }, among: kept.map { held[$0] }),
            let delta = try? reading.options.sessionPolicy.animatedDelta(
                from: held, to: result, touchedOld: held.indices.filter { !keptOld.contains($0) }, touchedNew: written)
        {
            return .sectioned(result, owners: collection.owners, delta: delta)
        }
        if !checked { try checkUnique(collection) }
        return .collection(collection)
    }

    /// Whether an item of `sections` has the id of one of `items`, by the ids' stored hashes.
    private static func anyID(of items: [JSONItem], among sections: [JSONSection]) -> Bool {
        guard !items.isEmpty else { return false }
        let finder = HashFinder(items)
        return sections.contains { section in section.items.contains { finder.find($0) != nil } }
    }

    // MARK: - Whole

    /// A result written out whole (`SessionCodec`'s text), read as an update's body would be:
    /// an edit that replaced the document's root, or one the finish above cannot take.
    func whole(encoded text: [UInt8], sectioned: Bool) throws(APIError) -> EditOutcome {
        let collection = try reading.collection(encoded: text, sectioned: sectioned, origin: blame, place: { $0 })
        try checkUnique(collection)
        return .collection(collection)
    }

    /// Repeated ids are the edit's fault: named here, at the operation that wrote the item.
    private func checkUnique(_ collection: JSONCollection) throws(APIError) {
        guard reading.options.unique else { return }
        let sectioned = if case .sectioned = collection.shape { true } else { false }
        do throws(SessionError) {
            _ = try SessionRules.holder(for: collection, options: reading.options)
        } catch {
            guard case .duplicate(let duplicate) = error else { throw .internalError("checking ids failed with \(error)") }
            let position: Int =
                switch duplicate.secondPosition {
                case .index(let index): index
                case .path(let path): path.section
                }
            throw repeated(
                id: "\(duplicate.id)", first: sessionPath(duplicate.firstPosition, sectioned: sectioned),
                second: sessionPath(duplicate.secondPosition, sectioned: sectioned), at: blame(position), section: duplicate.level == .section)
        }
    }

    /// Where a position of the result stands in the session's document, as a JSON Pointer.
    private func sessionPath(_ position: DuplicateIdentifierError.Position, sectioned: Bool) -> String {
        switch position {
        case .index(let index): sectioned ? "/sections/\(index)" : "/\(index)"
        case .path(let path):
            JSONPointer("sections").appending(String(path.section)).appending(reading.options.itemsKey).appending(String(path.item)).description
        }
    }

    /// A repeated id, at the operation `pointer` names; `first` and `second` are the places in
    /// the session's document.
    private func repeated(id: String, first: String, second: String, at pointer: JSONPointer, section: Bool) -> APIError {
        APIError(
            .duplicateID,
            message: "the edit would leave the \(section ? "section" : "item") id \(id) twice, at \(first) and \(second); ids must be unique",
            pointer: pointer.description)
    }
}
