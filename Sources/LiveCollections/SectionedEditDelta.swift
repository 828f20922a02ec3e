extension AnimationPolicy {
    /// What `animatedDelta(from:to:)` answers for a change that left every old section outside
    /// `touchedOld` as it was, id, fields and items, and standing among the new sections outside
    /// `touchedNew` (both ascending indices), in the same order. The sections may have been
    /// inserted, removed, moved or changed in their own fields: the section stage is the diff of
    /// the sections. The item stage is the diff of the touched sections alone, its paths put back
    /// among all the sections; the threshold rules count the whole collections.
    ///
    /// - Complexity: the sections, and the items of the touched ones.
    /// - Returns: nil where a touched old section that is kept is not a touched new one, or the
    ///   other way round (the caller then diffs the whole).
    /// - Throws: `DuplicateIdentifierError` where two sections, or two items of the touched
    ///   sections, share an id. The caller makes sure that no item of a touched section has the
    ///   id of an item of an untouched one.
    @inlinable
    package func animatedDelta<Section: UniquelyIdentifiableSection>(
        from old: [Section], to new: [Section], touchedOld: [Int], touchedNew: [Int]
    ) throws(DuplicateIdentifierError) -> AnimatedSectionedDelta? {
        let sections = try matchSections(old, new)
        // A kept section is touched on both sides or on neither.
        var newTouched = [Bool](repeating: false, count: new.count)
        for index in touchedNew { newTouched[index] = true }
        var pairedOld = 0
        for index in touchedOld where sections.oldToNew[index] >= 0 {
            guard newTouched[Int(sections.oldToNew[index])] else { return nil }
            pairedOld += 1
        }
        guard pairedOld == touchedNew.reduce(0, { sections.newToOld[$1] >= 0 ? $0 + 1 : $0 }) else { return nil }

        func placed(_ path: ItemPath) -> ItemPath { ItemPath(section: touchedNew[path.section], item: path.item) }
        func placed(_ pair: ItemPathPair) -> ItemPathPair { ItemPathPair(source: placed(pair.source), target: placed(pair.target)) }
        let match: SectionedMatch<Section>
        do {
            match = try SectionedMatch(touchedOld.map { old[$0] }, touchedNew.map { new[$0] })
        } catch {
            func position(_ position: DuplicateIdentifierError.Position) -> DuplicateIdentifierError.Position {
                guard case .path(let path) = position else { return position }
                let sides = error.collection == .old ? touchedOld : touchedNew
                return .path(ItemPath(section: sides[path.section], item: path.item))
            }
            throw DuplicateIdentifierError(
                id: error.id, collection: error.collection, level: error.level,
                firstPosition: position(error.firstPosition), secondPosition: position(error.secondPosition))
        }
        var result = AnimatedSectionedDelta(
            sectionAnimation: .reloadSections, itemAnimation: .reloadData, sectionDelta: nil, itemDelta: nil,
            deletedItemPaths: match.deletedItemPaths.map { ItemPath(section: touchedOld[$0.section], item: $0.item) })
        func sectionStage() -> IndexDelta { flatDelta(from: sections) { !old[$0].hasEqualSectionContent(to: new[$1]) } }
        // Every item path of the stage names a new section (sources too: they address the
        // state after the section stage).
        func itemStage() -> IndexPathDelta {
            let stage = match.itemDelta()
            return IndexPathDelta(
                deletions: stage.deletions.map(placed), insertions: stage.insertions.map(placed),
                moves: stage.moves.map(placed), reloads: stage.reloads.map(placed))
        }
        func finished() -> AnimatedSectionedDelta { result.withExact(keeping: keepsExactDelta, sections: sectionStage, items: itemStage) }
        guard !exceedsDataCount(old.count, new.count) else { return finished() }
        let sectionDelta = sectionStage()
        let proposed = proposedStyle(changeCount: sectionDelta.changeCount, coarse: .reloadSections)
        let preferred = delegate?.preferredSectionAnimationStyle(for: sectionDelta, proposed: proposed) ?? proposed
        result.sectionDelta = sectionDelta
        result.sectionAnimation = max(proposed, preferred)
        guard result.sectionAnimation == .preciseAnimations,
            !exceedsDataCount(old.reduce(0) { $0 + $1.items.count }, new.reduce(0) { $0 + $1.items.count })
        else { return finished() }
        let itemDelta = itemStage()
        let proposedItems = proposedStyle(changeCount: itemDelta.changeCount, coarse: .reloadData)
        let preferredItems = delegate?.preferredItemAnimationStyle(for: itemDelta, proposed: proposedItems) ?? proposedItems
        result.itemDelta = itemDelta
        result.itemAnimation = max(proposedItems, preferredItems)
        return finished()
    }
}

extension CollectionSectionData {
    /// Commits `newSections` with a delta worked out elsewhere (as by
    /// `AnimationPolicy.animatedDelta(from:to:touchedOld:touchedNew:)`), where the caller knows it equals what
    /// `update` would compute; the version check makes sure it starts from the sections it was
    /// worked out from.
    @inlinable @discardableResult
    package func commit(
        _ newSections: [Section], delta: AnimatedSectionedDelta, baseVersion: UInt64
    ) throws(CollectionDataError) -> SectionedCollectionUpdate<Item> {
        try store.write(ifVersion: baseVersion) { current throws(CollectionDataError) in
            let result = SectionedCollectionUpdate<Item>(
                sectionAnimation: delta.sectionAnimation, itemAnimation: delta.itemAnimation,
                sectionDelta: delta.sectionDelta, itemDelta: delta.itemDelta,
                deletedItems: delta.deletedItemPaths.map { current.value[$0.section].items[$0.item] },
                baseVersion: current.version, version: current.version + 1, exact: delta.exact)
            return (newSections, result)
        }
    }
}
