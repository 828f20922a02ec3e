extension AnimationPolicy {
    /// What `animatedDelta(from:to:)` answers for a change that kept every section in its place
    /// with its id and its own fields, and changed the items of the sections at `touched` alone
    /// (ascending indices, the same on both sides): the item stage is the diff of those sections,
    /// its paths put back among all the sections; the threshold rules count the whole
    /// collections.
    ///
    /// - Complexity: the items of the touched sections, and one step per section.
    /// - Throws: `DuplicateIdentifierError` where two items of the touched sections share an id.
    ///   The caller makes sure that no item of theirs has the id of an item elsewhere.
    @inlinable
    package func animatedDelta<Section: UniquelyIdentifiableSection>(
        from old: [Section], to new: [Section], touched: [Int]
    ) throws(DuplicateIdentifierError) -> AnimatedSectionedDelta {
        func placed(_ path: ItemPath) -> ItemPath { ItemPath(section: touched[path.section], item: path.item) }
        func placed(_ pair: ItemPathPair) -> ItemPathPair { ItemPathPair(source: placed(pair.source), target: placed(pair.target)) }
        let match: SectionedMatch<Section>
        do {
            match = try SectionedMatch(touched.map { old[$0] }, touched.map { new[$0] })
        } catch {
            func position(_ position: DuplicateIdentifierError.Position) -> DuplicateIdentifierError.Position {
                guard case .path(let path) = position else { return position }
                return .path(placed(path))
            }
            throw DuplicateIdentifierError(
                id: error.id, collection: error.collection, level: error.level,
                firstPosition: position(error.firstPosition), secondPosition: position(error.secondPosition))
        }
        var result = AnimatedSectionedDelta(
            sectionAnimation: .reloadSections, itemAnimation: .reloadData,
            sectionDelta: nil, itemDelta: nil, deletedItemPaths: match.deletedItemPaths.map(placed))
        guard !exceedsDataCount(old.count, new.count) else { return result }
        let sectionDelta = IndexDelta()
        let proposed = proposedStyle(changeCount: 0, coarse: .reloadSections)
        let preferred = delegate?.preferredSectionAnimationStyle(for: sectionDelta, proposed: proposed) ?? proposed
        result.sectionDelta = sectionDelta
        result.sectionAnimation = max(proposed, preferred)
        guard result.sectionAnimation == .preciseAnimations,
            !exceedsDataCount(old.reduce(0) { $0 + $1.items.count }, new.reduce(0) { $0 + $1.items.count })
        else { return result }
        let stage = match.itemDelta()
        let itemDelta = IndexPathDelta(
            deletions: stage.deletions.map(placed), insertions: stage.insertions.map(placed),
            moves: stage.moves.map(placed), reloads: stage.reloads.map(placed))
        let proposedItems = proposedStyle(changeCount: itemDelta.changeCount, coarse: .reloadData)
        let preferredItems = delegate?.preferredItemAnimationStyle(for: itemDelta, proposed: proposedItems) ?? proposedItems
        result.itemDelta = itemDelta
        result.itemAnimation = max(proposedItems, preferredItems)
        return result
    }
}

extension CollectionSectionData {
    /// Commits `newSections` with a delta worked out elsewhere (as by
    /// `AnimationPolicy.animatedDelta(from:to:touched:)`), where the caller knows it equals what
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
                baseVersion: current.version, version: current.version + 1)
            return (newSections, result)
        }
    }
}
