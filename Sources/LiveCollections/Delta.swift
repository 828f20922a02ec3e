/// Where an item was (`source`, in the old collection) and where it is (`target`, in the new).
public struct PositionPair<Position: Hashable & Sendable>: Hashable, Sendable {
    public var source: Position
    public var target: Position

    public init(source: Position, target: Position) {
        self.source = source
        self.target = target
    }
}

/// The changes that turn one collection into another, replayed as
/// `../shared/design/delta-semantics.md` says (and as `replay` does).
///
/// - `deletions`: old positions, ascending.
/// - `insertions`: new positions, ascending.
/// - `moves`: kept items that left their relative order, ascending by source. Minimal: the
///   kept items not moved form a longest increasing subsequence of their new positions.
/// - `reloads`: kept items whose content changed, ascending by source.
public struct Delta<Position: Comparable & Hashable & Sendable>: Hashable, Sendable {
    public var deletions: [Position]
    public var insertions: [Position]
    public var moves: [PositionPair<Position>]
    public var reloads: [PositionPair<Position>]

    public init(
        deletions: [Position] = [],
        insertions: [Position] = [],
        moves: [PositionPair<Position>] = [],
        reloads: [PositionPair<Position>] = []
    ) {
        self.deletions = deletions
        self.insertions = insertions
        self.moves = moves
        self.reloads = reloads
    }

    /// Deletions + insertions + moves + reloads: what the animation thresholds count.
    public var changeCount: Int { deletions.count + insertions.count + moves.count + reloads.count }

    public var hasChanges: Bool { changeCount > 0 }
}

public typealias IndexPair = PositionPair<Int>
/// The delta of a flat collection: positions are indices.
public typealias IndexDelta = Delta<Int>

/// A row's place in a sectioned collection.
public struct ItemPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var section: Int
    public var item: Int

    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.section, lhs.item) < (rhs.section, rhs.item)
    }

    public var description: String { "[\(section), \(item)]" }
}

public typealias ItemPathPair = PositionPair<ItemPath>
/// The item stage of a sectioned delta: positions are (section, item) paths.
public typealias IndexPathDelta = Delta<ItemPath>

/// A sectioned delta: `sectionDelta` is applied first, then `itemDelta`.
///
/// `itemDelta`'s deletions, move sources and reload sources address the state after the
/// section stage; its insertions, move targets and reload targets address the final state.
/// Rows of inserted sections and of deleted sections never appear in it.
public struct SectionedDelta: Hashable, Sendable {
    public var sectionDelta: IndexDelta
    public var itemDelta: IndexPathDelta

    public init(sectionDelta: IndexDelta = IndexDelta(), itemDelta: IndexPathDelta = IndexPathDelta()) {
        self.sectionDelta = sectionDelta
        self.itemDelta = itemDelta
    }

    public var changeCount: Int { sectionDelta.changeCount + itemDelta.changeCount }

    public var hasChanges: Bool { changeCount > 0 }
}
