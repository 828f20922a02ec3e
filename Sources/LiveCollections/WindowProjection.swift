/// A flat delta seen through windows: where each old position went and where each new one came
/// from, in O(log changes) a position, so that a client showing a few rows of a long list gets
/// the delta of those rows alone without anything being diffed again.
///
/// The delta's kept items that were not moved keep their order (they are a longest increasing
/// subsequence), so the k-th of them in the old list is the k-th of them in the new one; every
/// other position is a deletion, an insertion or a move's end, all listed sorted.
public struct WindowProjection: Sendable {
    /// The delta projected.
    public let delta: IndexDelta
    /// Old positions that are not kept in place: deletions and move sources, ascending.
    private let left: [Int]
    /// New positions not filled by kept items in place: insertions and move targets, ascending.
    private let entered: [Int]
    /// Moves by target, ascending.
    private let movesByTarget: [IndexPair]
    /// Where the changes lie, to pass windows far from them by in a few comparisons.
    public let span: ChangeSpan

    /// The projection of `delta` (sorted as `Delta` says).
    public init(_ delta: IndexDelta) {
        self.delta = delta
        left = Self.merged(delta.deletions, delta.moves.map(\.source))
        let byTarget = delta.moves.sorted { $0.target < $1.target }
        movesByTarget = byTarget
        entered = Self.merged(delta.insertions, byTarget.map(\.target))
        let reloadSources = delta.reloads.lazy.map(\.source)
        let reloadTargets = delta.reloads.lazy.map(\.target)
        span = ChangeSpan(
            firstTouched: min(left.first ?? .max, entered.first ?? .max, reloadSources.min() ?? .max, reloadTargets.min() ?? .max),
            lastTouchedOld: max(left.last ?? -1, reloadSources.max() ?? -1), lastTouchedNew: max(entered.last ?? -1, reloadTargets.max() ?? -1))
    }

    /// Where the item at old position `old` is now; nil where it was deleted.
    public func newPosition(ofOld old: Int) -> Int? {
        if Self.contains(delta.deletions, old) { return nil }
        if let move = Self.find(delta.moves, old, bySource: true) { return move.target }
        return Self.place(rank: old - Self.countBelow(left, old), skipping: entered)
    }

    /// Where the item at new position `new` was; nil where it was inserted.
    public func oldPosition(ofNew new: Int) -> Int? {
        if Self.contains(delta.insertions, new) { return nil }
        if let move = Self.find(movesByTarget, new, bySource: false) { return move.source }
        return Self.place(rank: new - Self.countBelow(entered, new), skipping: left)
    }

    /// Whether the rows at old positions `old` and those at new positions `new` are the same
    /// items in the same order, none reloaded. Where they are, the window needs no delta.
    public func isUnchanged(old: Range<Int>, new: Range<Int>) -> Bool {
        guard old.count == new.count else { return false }
        guard !old.isEmpty else { return true }
        let reloads = delta.reloads
        let first = Self.firstAtLeast(reloads.count) { reloads[$0].source >= old.lowerBound }
        guard first == reloads.count || reloads[first].source >= old.upperBound else { return false }
        // Nothing left or entered inside either range, and the first rows one item: the rest
        // follow in order, in a few searches.
        if Self.countBelow(left, old.upperBound) == Self.countBelow(left, old.lowerBound),
            Self.countBelow(entered, new.upperBound) == Self.countBelow(entered, new.lowerBound)
        {
            return newPosition(ofOld: old.lowerBound) == new.lowerBound
        }
        // A move may still leave the rows inside where they were (the one item of a window that
        // all the others were moved around, moved onto its own position): asked row by row.
        return zip(old, new).allSatisfy { newPosition(ofOld: $0) == $1 }
    }

    /// The delta from the rows at old positions `old` to the rows at new positions `new`, each
    /// counted from its range's start: a row that leaves the window is a deletion, one that
    /// enters an insertion, a move with both ends inside stays a move, and a move that crosses
    /// an edge is a deletion or an insertion; reloads of rows inside both.
    public func projected(old: Range<Int>, new: Range<Int>) -> IndexDelta {
        var deletions: [Int] = []
        var insertions: [Int] = []
        var moves: [IndexPair] = []
        for position in old {
            guard let now = newPosition(ofOld: position), new.contains(now) else {
                deletions.append(position - old.lowerBound)
                continue
            }
            if Self.find(delta.moves, position, bySource: true) != nil {
                moves.append(IndexPair(source: position - old.lowerBound, target: now - new.lowerBound))
            }
        }
        for position in new {
            guard let before = oldPosition(ofNew: position), old.contains(before) else {
                insertions.append(position - new.lowerBound)
                continue
            }
        }
        let reloads = delta.reloads
        var reloaded: [IndexPair] = []
        var index = Self.firstAtLeast(reloads.count) { reloads[$0].source >= old.lowerBound }
        while index < reloads.count, reloads[index].source < old.upperBound {
            let pair = reloads[index]
            if new.contains(pair.target) {
                reloaded.append(IndexPair(source: pair.source - old.lowerBound, target: pair.target - new.lowerBound))
            }
            index += 1
        }
        return IndexDelta(deletions: deletions, insertions: insertions, moves: moves, reloads: reloaded)
    }

    // MARK: - Sorted lists

    /// The position of the `rank`-th (from 0) of the positions not in `skipping`.
    private static func place(rank: Int, skipping: [Int]) -> Int {
        // skipping[k] - k counts the free positions before skipping[k]; it never decreases.
        rank + firstAtLeast(skipping.count) { skipping[$0] - $0 > rank }
    }

    /// How many of `sorted` are below `value`.
    private static func countBelow(_ sorted: [Int], _ value: Int) -> Int {
        firstAtLeast(sorted.count) { sorted[$0] >= value }
    }

    private static func contains(_ sorted: [Int], _ value: Int) -> Bool {
        let index = countBelow(sorted, value)
        return index < sorted.count && sorted[index] == value
    }

    /// The pair whose source (or target) is `value`, in pairs sorted by it. (No key path: this
    /// runs for every row of every window a commit reaches.)
    private static func find(_ pairs: [IndexPair], _ value: Int, bySource: Bool) -> IndexPair? {
        let index = firstAtLeast(pairs.count) { (bySource ? pairs[$0].source : pairs[$0].target) >= value }
        guard index < pairs.count else { return nil }
        return (bySource ? pairs[index].source : pairs[index].target) == value ? pairs[index] : nil
    }

    /// The first index in `0..<count` where `holds` is true, for a predicate false then true.
    private static func firstAtLeast(_ count: Int, _ holds: (Int) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if holds(middle) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    private static func merged(_ a: [Int], _ b: [Int]) -> [Int] {
        (a + b).sorted()
    }
}

/// Where a flat delta's changes lie, in plain values: the first position touched, old or new
/// (deleted, inserted, a move's end, reloaded; `Int.max` where none is), and the last old and
/// last new ones (-1 where none is). What it says of a position far from them is exact, and a
/// window far from a change is passed by in a few comparisons, the delta's lists unread.
public struct ChangeSpan: Sendable, Hashable {
    // Inlinable, with what they read: a fan-out pass asks them of thousands of windows in a
    // tight loop (`LiveFeed.passQuickly`), where a call each would cost more than they do.
    @usableFromInline let firstTouched: Int
    @usableFromInline let lastTouchedOld: Int
    @usableFromInline let lastTouchedNew: Int

    /// Where the item at old position `old` is now, where that is plain from the span alone:
    /// before every change it is where it was; past all of them, old and new, it moved by the
    /// change in count, `shift` (the items past the changes are the same last items of both
    /// lists). Nil says nothing: ask `WindowProjection.newPosition`.
    @inlinable
    public func newPosition(ofOld old: Int, shift: Int) -> Int? {
        if old < firstTouched { return old }
        if old > lastTouchedOld && old + shift > lastTouchedNew { return old + shift }
        return nil
    }

    /// Whether the rows at old positions `old` are, unchanged, the rows at new positions `new`,
    /// where that is plain from the span alone: all before the changes, or all past them.
    /// False says nothing: ask `WindowProjection.isUnchanged`.
    @inlinable
    public func isUnchanged(old: Range<Int>, new: Range<Int>, shift: Int) -> Bool {
        guard old.count == new.count else { return false }
        guard let first = old.first, let last = old.last else { return true }
        return newPosition(ofOld: first, shift: shift) == new.lowerBound && newPosition(ofOld: last, shift: shift) == new.upperBound - 1
            && (last < firstTouched || first > lastTouchedOld)
    }
}
