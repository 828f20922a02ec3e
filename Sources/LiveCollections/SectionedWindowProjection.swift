/// What a window reads of a step's delta: where a row (or section) of the old list is now, and
/// whether a range of rows came through unchanged.
public protocol WindowMotion: Sendable {
    /// Where the row at old position `old` is now; nil where it was deleted.
    func newPosition(ofOld old: Int) -> Int?
    /// Whether the rows at old positions `old` are those at new positions `new`, in order and
    /// unchanged.
    func isUnchanged(old: Range<Int>, new: Range<Int>) -> Bool
}

extension WindowProjection: WindowMotion {}

/// A sectioned delta seen through windows of whole sections: the section stage projected as a
/// flat list of sections (`WindowProjection`), and the item stage kept for the sections a
/// window holds before and after.
///
/// A section that stays in the window keeps its rows through the section stage, so the item
/// stage's operations on it stay, its section counted from the window's first; a move from a
/// section that stays to one that left is a deletion, one from a section outside to one that
/// stays an insertion. Rows of sections that enter or leave the window come and go with them.
public struct SectionedWindowProjection: WindowMotion {
    /// The section stage, projected.
    public let sections: WindowProjection
    /// The item stage (its sections are new positions throughout).
    public let items: IndexPathDelta
    /// The sections the item stage touches, ascending, once each.
    private let touched: [Int]

    /// The projection of `delta` (sorted as `Delta` says).
    public init(_ delta: SectionedDelta) {
        sections = WindowProjection(delta.sectionDelta)
        items = delta.itemDelta
        var touched = delta.itemDelta.deletions.map(\.section) + delta.itemDelta.insertions.map(\.section)
        for pair in delta.itemDelta.moves + delta.itemDelta.reloads {
            touched.append(pair.source.section)
            touched.append(pair.target.section)
        }
        self.touched = Array(Set(touched)).sorted()
    }

    /// Where the section at old position `old` is now; nil where it was deleted.
    public func newPosition(ofOld old: Int) -> Int? { sections.newPosition(ofOld: old) }

    /// The same sections in the same order, none of them changed, and no row of theirs either.
    public func isUnchanged(old: Range<Int>, new: Range<Int>) -> Bool {
        guard sections.isUnchanged(old: old, new: new) else { return false }
        var low = 0
        var high = touched.count
        while low < high {
            let middle = (low + high) / 2
            if touched[middle] >= new.lowerBound { high = middle } else { low = middle + 1 }
        }
        return low == touched.count || touched[low] >= new.upperBound
    }

    /// The delta from the sections at old positions `old` to those at new positions `new`,
    /// each counted from its range's start.
    public func projected(old: Range<Int>, new: Range<Int>) -> SectionedDelta {
        let sectionDelta = sections.projected(old: old, new: new)
        // The window's sections that were in it before, by new position: their rows stay.
        var stays = [Bool](repeating: false, count: new.count)
        for position in new {
            if let before = sections.oldPosition(ofNew: position), old.contains(before) { stays[position - new.lowerBound] = true }
        }
        func local(_ path: ItemPath) -> ItemPath? {
            guard new.contains(path.section), stays[path.section - new.lowerBound] else { return nil }
            return ItemPath(section: path.section - new.lowerBound, item: path.item)
        }
        var delta = IndexPathDelta()
        delta.deletions = items.deletions.compactMap(local)
        delta.insertions = items.insertions.compactMap(local)
        for move in items.moves {
            switch (local(move.source), local(move.target)) {
            case (let source?, let target?): delta.moves.append(ItemPathPair(source: source, target: target))
            case (let source?, nil): delta.deletions.append(source)
            case (nil, let target?): delta.insertions.append(target)
            case (nil, nil): break
            }
        }
        for reload in items.reloads {
            if let source = local(reload.source), let target = local(reload.target) {
                delta.reloads.append(ItemPathPair(source: source, target: target))
            }
        }
        delta.deletions.sort()
        delta.insertions.sort()
        return SectionedDelta(sectionDelta: sectionDelta, itemDelta: delta)
    }
}
