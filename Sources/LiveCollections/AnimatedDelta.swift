/// A flat delta with the animation style the threshold rules chose for it.
public struct AnimatedDelta: Sendable, Hashable {
    /// How the client should animate the change.
    public var animation: AnimationStyle
    /// The delta, whenever it was computed; always present when `animation` is precise.
    public var delta: IndexDelta?
    /// Old indices of the items whose id is gone, ascending (known even when `delta` is not).
    public var deletedIndices: [Int]
    /// The delta wherever it was worked out, also where the thresholds keep it from `delta`
    /// (a delta worked out from edits, of a collection over `dataCountAnimationThreshold`):
    /// what a window of a few rows is projected from.
    @usableFromInline package var exact: IndexDelta?

    @usableFromInline package init(animation: AnimationStyle, delta: IndexDelta?, deletedIndices: [Int], exact: IndexDelta? = nil) {
        self.animation = animation
        self.delta = delta
        self.deletedIndices = deletedIndices
        self.exact = exact ?? delta
    }
}

/// A sectioned delta with the styles the threshold rules chose for sections and for items.
public struct AnimatedSectionedDelta: Sendable, Hashable {
    /// How the client should animate the section stage.
    public var sectionAnimation: AnimationStyle
    /// How the client should animate the item stage.
    public var itemAnimation: AnimationStyle
    /// The section stage, whenever it was computed.
    public var sectionDelta: IndexDelta?
    /// Present whenever it was computed; always when both styles are precise.
    public var itemDelta: IndexPathDelta?
    /// Paths, in the old collection, of the items whose id is gone from the whole collection.
    public var deletedItemPaths: [ItemPath]
    /// Both stages wherever they were worked out, also where the thresholds keep them from
    /// `sectionDelta` and `itemDelta` (see `AnimationPolicy.keepsExactDelta`).
    @usableFromInline package var exact: SectionedDelta?

    @usableFromInline package init(
        sectionAnimation: AnimationStyle, itemAnimation: AnimationStyle,
        sectionDelta: IndexDelta?, itemDelta: IndexPathDelta?, deletedItemPaths: [ItemPath], exact: SectionedDelta? = nil
    ) {
        self.sectionAnimation = sectionAnimation
        self.itemAnimation = itemAnimation
        self.sectionDelta = sectionDelta
        self.itemDelta = itemDelta
        self.deletedItemPaths = deletedItemPaths
        self.exact = exact ?? SectionedDelta(sectionDelta, itemDelta)
    }

    /// Changes over both stages, as far as they were computed.
    public var changeCount: Int { (sectionDelta?.changeCount ?? 0) + (itemDelta?.changeCount ?? 0) }

    /// This delta with `exact` set, as a diff by the rules ends: both stages where the rules
    /// worked them out; where they stopped short and `keeping` (a session's rules), the stages
    /// missing worked out by `sections` and `items`.
    @inlinable package func withExact(keeping: Bool, sections: () -> IndexDelta, items: () -> IndexPathDelta) -> AnimatedSectionedDelta {
        var result = self
        if let sectionDelta, let itemDelta {
            result.exact = SectionedDelta(sectionDelta: sectionDelta, itemDelta: itemDelta)
        } else if keeping {
            result.exact = SectionedDelta(sectionDelta: sectionDelta ?? sections(), itemDelta: items())
        }
        return result
    }
}

extension AnimationPolicy {
    /// Diffs two flat collections by the threshold rules: above `dataCountAnimationThreshold`
    /// items the delta is not computed (ids are still checked for duplicates).
    @inlinable
    public func animatedDelta<Item: UniquelyIdentifiable>(
        from old: [Item], to new: [Item]
    ) throws(DuplicateIdentifierError) -> AnimatedDelta {
        let match = try matchItems(old, new)
        func delta() -> IndexDelta {
            old.withUnsafeBufferPointer { old in
                new.withUnsafeBufferPointer { new in flatDelta(from: match) { old[$0] != new[$1] } }
            }
        }
        if exceedsDataCount(old.count, new.count) {
            let deleted = match.oldToNew.indices.filter { match.oldToNew[$0] < 0 }
            return AnimatedDelta(animation: .reloadSections, delta: nil, deletedIndices: deleted, exact: keepsExactDelta ? delta() : nil)
        }
        return animated(delta(), oldCount: old.count, newCount: new.count)
    }

    /// The threshold rules (and the delegate) applied to a flat delta worked out elsewhere,
    /// between collections of `oldCount` and `newCount` items: what `animatedDelta(from:to:)`
    /// answers for the same change.
    @usableFromInline package func animated(_ delta: IndexDelta, oldCount: Int, newCount: Int) -> AnimatedDelta {
        if exceedsDataCount(oldCount, newCount) {
            return AnimatedDelta(animation: .reloadSections, delta: nil, deletedIndices: delta.deletions, exact: delta)
        }
        let proposed = proposedStyle(changeCount: delta.changeCount, coarse: .reloadSections)
        let preferred = delegate?.preferredItemAnimationStyle(for: delta, proposed: proposed) ?? proposed
        return AnimatedDelta(animation: max(proposed, preferred), delta: delta, deletedIndices: delta.deletions)
    }

    /// The threshold rules (and the delegate) applied to a sectioned delta worked out elsewhere
    /// (a window's, projected), between `oldSections` and `newSections` sections holding
    /// `oldItems` and `newItems` rows: the styles `animatedDelta(from:to:)` gives such a change.
    @usableFromInline package func animated(
        _ delta: SectionedDelta, oldSections: Int, newSections: Int, oldItems: Int, newItems: Int, deletedItemPaths: [ItemPath]
    ) -> AnimatedSectionedDelta {
        var result = AnimatedSectionedDelta(
            sectionAnimation: .reloadSections, itemAnimation: .reloadData, sectionDelta: nil, itemDelta: nil, deletedItemPaths: deletedItemPaths,
            exact: delta)
        guard !exceedsDataCount(oldSections, newSections) else { return result }
        let proposed = proposedStyle(changeCount: delta.sectionDelta.changeCount, coarse: .reloadSections)
        let preferred = delegate?.preferredSectionAnimationStyle(for: delta.sectionDelta, proposed: proposed) ?? proposed
        result.sectionDelta = delta.sectionDelta
        result.sectionAnimation = max(proposed, preferred)
        guard result.sectionAnimation == .preciseAnimations, !exceedsDataCount(oldItems, newItems) else { return result }
        let proposedItems = proposedStyle(changeCount: delta.itemDelta.changeCount, coarse: .reloadData)
        let preferredItems = delegate?.preferredItemAnimationStyle(for: delta.itemDelta, proposed: proposedItems) ?? proposedItems
        result.itemDelta = delta.itemDelta
        result.itemAnimation = max(proposedItems, preferredItems)
        return result
    }

    /// Diffs two sectioned collections by the threshold rules, sections first: items are
    /// animated precisely only when sections are.
    @inlinable
    public func animatedDelta<Section: UniquelyIdentifiableSection>(
        from old: [Section], to new: [Section]
    ) throws(DuplicateIdentifierError) -> AnimatedSectionedDelta {
        let match = try SectionedMatch(old, new)
        var result = AnimatedSectionedDelta(
            sectionAnimation: .reloadSections, itemAnimation: .reloadData,
            sectionDelta: nil, itemDelta: nil, deletedItemPaths: match.deletedItemPaths)
        func finished() -> AnimatedSectionedDelta {
            result.withExact(keeping: keepsExactDelta, sections: { match.sectionDelta(old: old, new: new) }, items: { match.itemDelta() })
        }
        guard !exceedsDataCount(old.count, new.count) else { return finished() }
        let sectionDelta = match.sectionDelta(old: old, new: new)
        let proposed = proposedStyle(changeCount: sectionDelta.changeCount, coarse: .reloadSections)
        let preferred = delegate?.preferredSectionAnimationStyle(for: sectionDelta, proposed: proposed) ?? proposed
        result.sectionDelta = sectionDelta
        result.sectionAnimation = max(proposed, preferred)
        guard result.sectionAnimation == .preciseAnimations,
            !exceedsDataCount(match.oldItems.count, match.newItems.count)
        else { return finished() }
        let itemDelta = match.itemDelta()
        let proposedItems = proposedStyle(changeCount: itemDelta.changeCount, coarse: .reloadData)
        let preferredItems =
            delegate?.preferredItemAnimationStyle(for: itemDelta, proposed: proposedItems) ?? proposedItems
        result.itemDelta = itemDelta
        result.itemAnimation = max(proposedItems, preferredItems)
        return finished()
    }
}
