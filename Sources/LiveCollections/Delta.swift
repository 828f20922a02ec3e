/// Where an item was (`source`, in the old collection) and where it is (`target`, in the new).
public struct PositionPair<Position: Hashable & Sendable>: Hashable, Sendable {
    /// The position in the old collection.
    public var source: Position
    /// The position in the new collection.
    public var target: Position

    /// A pair of an old and a new position.
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
    /// Old positions of removed items, ascending.
    public var deletions: [Position]
    /// New positions of added items, ascending.
    public var insertions: [Position]
    /// Kept items that left their relative order, ascending by source.
    public var moves: [PositionPair<Position>]
    /// Kept items whose content changed, ascending by source.
    public var reloads: [PositionPair<Position>]

    /// A delta of the given changes; each list must be sorted as the type describes.
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

    /// Whether anything changed.
    public var hasChanges: Bool { changeCount > 0 }
}

/// A move or reload in a flat collection.
public typealias IndexPair = PositionPair<Int>
/// The delta of a flat collection: positions are indices.
public typealias IndexDelta = Delta<Int>

/// A row's place in a sectioned collection.
public struct ItemPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The section's index.
    public var section: Int
    /// The item's index within its section.
    public var item: Int

    /// The path of item `item` in section `section`.
    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    /// By section, then by item.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.section, lhs.item) < (rhs.section, rhs.item)
    }

    /// `[section, item]`.
    public var description: String { "[\(section), \(item)]" }
}

/// A move or reload in a sectioned collection.
public typealias ItemPathPair = PositionPair<ItemPath>
/// The item stage of a sectioned delta: positions are (section, item) paths.
public typealias IndexPathDelta = Delta<ItemPath>

/// A sectioned delta: `sectionDelta` is applied first, then `itemDelta`.
///
/// `itemDelta`'s deletions, move sources and reload sources address the state after the
/// section stage; its insertions, move targets and reload targets address the final state.
/// Rows of inserted sections and of deleted sections never appear in it.
public struct SectionedDelta: Hashable, Sendable {
    /// The section stage, applied first.
    public var sectionDelta: IndexDelta
    /// The item stage, applied after the section stage.
    public var itemDelta: IndexPathDelta

    /// A delta of the two stages.
    public init(sectionDelta: IndexDelta = IndexDelta(), itemDelta: IndexPathDelta = IndexPathDelta()) {
        self.sectionDelta = sectionDelta
        self.itemDelta = itemDelta
    }

    /// Changes over both stages.
    public var changeCount: Int { sectionDelta.changeCount + itemDelta.changeCount }

    /// Both stages, where both were worked out.
    @usableFromInline package init?(_ sectionDelta: IndexDelta?, _ itemDelta: IndexPathDelta?) {
        guard let sectionDelta, let itemDelta else { return nil }
        self.init(sectionDelta: sectionDelta, itemDelta: itemDelta)
    }

    /// Whether anything changed.
    public var hasChanges: Bool { changeCount > 0 }
}
