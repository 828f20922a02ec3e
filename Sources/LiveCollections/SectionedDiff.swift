/// Where each item of a flattened sectioned collection stands.
@usableFromInline
struct SectionLayout: Sendable {
    /// For each flat item index, its section.
    @usableFromInline var sectionOf: [Int32]
    /// For each section, the flat index of its first item; one more entry holds the total.
    @usableFromInline var starts: [Int]

    @inlinable
    init<Section: UniquelyIdentifiableSection>(_ sections: [Section], items: inout [Section.Item]) {
        sectionOf = []
        starts = []
        starts.reserveCapacity(sections.count + 1)
        for (index, section) in sections.enumerated() {
            starts.append(items.count)
            let sectionItems = section.items
            items.append(contentsOf: sectionItems)
            sectionOf.append(contentsOf: repeatElement(Int32(truncatingIfNeeded: index), count: sectionItems.count))
        }
        starts.append(items.count)
    }

    @inlinable
    func path(ofFlatIndex index: Int) -> ItemPath {
        let section = Int(sectionOf[index])
        return ItemPath(section: section, item: index - starts[section])
    }
}

/// Both sides of a sectioned collection, flattened, with their ids matched.
@usableFromInline
struct SectionedMatch<Section: UniquelyIdentifiableSection> {
    @usableFromInline var sections: IdentityMatch
    @usableFromInline var oldItems: [Section.Item]
    @usableFromInline var newItems: [Section.Item]
    @usableFromInline var oldLayout: SectionLayout
    @usableFromInline var newLayout: SectionLayout
    @usableFromInline var items: IdentityMatch

    @inlinable
    init(_ old: [Section], _ new: [Section]) throws(DuplicateIdentifierError) {
        sections = try matchSections(old, new)
        var oldItems = [Section.Item]()
        var newItems = [Section.Item]()
        let oldLayout = SectionLayout(old, items: &oldItems)
        let newLayout = SectionLayout(new, items: &newItems)
        do throws(DuplicateIndices) {
            items = try oldItems.withUnsafeBufferPointer { old throws(DuplicateIndices) in
                try newItems.withUnsafeBufferPointer { new throws(DuplicateIndices) in
                    try matchIdentities(old, new)
                }
            }
        } catch {
            let (items, layout) = error.collection == .old ? (oldItems, oldLayout) : (newItems, newLayout)
            throw DuplicateIdentifierError(
                id: items[error.second].uniqueID, collection: error.collection, level: .item,
                firstPosition: .path(layout.path(ofFlatIndex: error.first)),
                secondPosition: .path(layout.path(ofFlatIndex: error.second)))
        }
        self.oldItems = oldItems
        self.newItems = newItems
        self.oldLayout = oldLayout
        self.newLayout = newLayout
    }

    @inlinable
    func sectionDelta(old: [Section], new: [Section]) -> IndexDelta {
        flatDelta(from: sections) { !old[$0].hasEqualSectionContent(to: new[$1]) }
    }

    @inlinable
    func itemDelta() -> IndexPathDelta {
        oldItems.withUnsafeBufferPointer { old in
            newItems.withUnsafeBufferPointer { new in
                sectionedItemDelta(
                    items: items, oldLayout: oldLayout, newLayout: newLayout, sections: sections
                ) { old[$0] != new[$1] }
            }
        }
    }

    /// Old paths (in the old collection's own coordinates) of items whose id is gone.
    @inlinable
    var deletedItemPaths: [ItemPath] {
        items.oldToNew.indices.compactMap { items.oldToNew[$0] < 0 ? oldLayout.path(ofFlatIndex: $0) : nil }
    }
}

@inlinable
func matchSections<Section: UniquelyIdentifiableSection>(
    _ old: [Section], _ new: [Section]
) throws(DuplicateIdentifierError) -> IdentityMatch {
    do {
        return try old.withUnsafeBufferPointer { old throws(DuplicateIndices) in
            try new.withUnsafeBufferPointer { new throws(DuplicateIndices) in try matchIdentities(old, new) }
        }
    } catch {
        let side = error.collection == .old ? old : new
        throw DuplicateIdentifierError(
            id: side[error.second].uniqueID, collection: error.collection, level: .section,
            firstPosition: .index(error.first), secondPosition: .index(error.second))
    }
}

/// The item stage of a sectioned delta (see `SectionedDelta`).
///
/// An item is kept only when both its old and its new section survive; otherwise it leaves
/// with its deleted section or arrives with its inserted one. Items that change section are
/// moves; within a section, the fewest moves keep a longest increasing run in place.
@usableFromInline
func sectionedItemDelta(
    items: IdentityMatch, oldLayout: SectionLayout, newLayout: SectionLayout,
    sections: IdentityMatch, contentChanged: (Int, Int) -> Bool
) -> IndexPathDelta {
    var delta = IndexPathDelta()
    var stayingNewRows = [Int32]()
    var stayingOldRows = [Int32]()
    for (oldSection, section) in sections.oldToNew.enumerated() where section >= 0 {
        let section = Int(section)
        let start = oldLayout.starts[oldSection]
        stayingNewRows.removeAll(keepingCapacity: true)
        stayingOldRows.removeAll(keepingCapacity: true)
        for flat in start..<oldLayout.starts[oldSection + 1] {
            let source = ItemPath(section: section, item: flat - start)
            let newFlat = Int(items.oldToNew[flat])
            guard newFlat >= 0, sections.newToOld[Int(newLayout.sectionOf[newFlat])] >= 0 else {
                delta.deletions.append(source)
                continue
            }
            let target = newLayout.path(ofFlatIndex: newFlat)
            if contentChanged(flat, newFlat) {
                delta.reloads.append(ItemPathPair(source: source, target: target))
            }
            if target.section == section {
                stayingOldRows.append(Int32(truncatingIfNeeded: source.item))
                stayingNewRows.append(Int32(truncatingIfNeeded: target.item))
            } else {
                delta.moves.append(ItemPathPair(source: source, target: target))
            }
        }
        let stays = stayingNewRows.withUnsafeBufferPointer(longestIncreasingSubsequenceMask)
        for k in stays.indices where !stays[k] {
            delta.moves.append(
                ItemPathPair(
                    source: ItemPath(section: section, item: Int(stayingOldRows[k])),
                    target: ItemPath(section: section, item: Int(stayingNewRows[k]))))
        }
    }
    for (section, oldSection) in sections.newToOld.enumerated() where oldSection >= 0 {
        let start = newLayout.starts[section]
        for flat in start..<newLayout.starts[section + 1] {
            let oldFlat = Int(items.newToOld[flat])
            if oldFlat < 0 || sections.oldToNew[Int(oldLayout.sectionOf[oldFlat])] < 0 {
                delta.insertions.append(ItemPath(section: section, item: flat - start))
            }
        }
    }
    // Old sections were walked in old order, but paths use new section indices.
    delta.deletions.sort()
    delta.moves.sort { $0.source < $1.source }
    delta.reloads.sort { $0.source < $1.source }
    return delta
}

extension SectionedDelta {
    /// The exact, minimal sectioned delta from `old` to `new`.
    ///
    /// - Throws: `DuplicateIdentifierError` where two sections, or two items anywhere in one
    ///   collection, share an id.
    @inlinable
    public init<Section: UniquelyIdentifiableSection>(
        from old: [Section], to new: [Section]
    ) throws(DuplicateIdentifierError) {
        let match = try SectionedMatch(old, new)
        self.init(sectionDelta: match.sectionDelta(old: old, new: new), itemDelta: match.itemDelta())
    }
}
