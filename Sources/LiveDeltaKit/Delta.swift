/// A place in a sectioned collection.
public struct ItemPath: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The section's index.
    public var section: Int
    /// The item's index within its section.
    public var item: Int

    /// The item at `item` of section `section`.
    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    /// `section.item`.
    public var description: String { "\(section).\(item)" }
}

/// A move or a reload: from `source` (a place before the batch) to `target` (one after).
public struct Move<Position: Codable & Hashable & Sendable>: Codable, Hashable, Sendable {
    /// Where the item is before the batch.
    public var source: Position
    /// Where it is after the batch.
    public var target: Position

    /// From `source` (before the batch) to `target` (after it).
    public init(source: Position, target: Position) {
        self.source = source
        self.target = target
    }
}

/// A delta as UIKit's batch updates read it (docs/deltas.md): deletions and move sources at
/// places before the batch, insertions and move targets at places after it; every other item
/// keeps its order; reloads are applied after the batch, at their targets.
public struct Delta<Position: Codable & Hashable & Sendable>: Codable, Hashable, Sendable {
    /// Places before the batch whose items go.
    public var deletions: [Position]
    /// Places after the batch whose items are new.
    public var insertions: [Position]
    /// Items that change place, as few as can be.
    public var moves: [Move<Position>]
    /// Kept items whose content changed: reload them after the batch, at `target`.
    public var reloads: [Move<Position>]

    /// A delta of these changes.
    public init(deletions: [Position] = [], insertions: [Position] = [], moves: [Move<Position>] = [], reloads: [Move<Position>] = []) {
        self.deletions = deletions
        self.insertions = insertions
        self.moves = moves
        self.reloads = reloads
    }

    /// Whether nothing changes.
    public var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && moves.isEmpty && reloads.isEmpty }
}

/// What `/diff`, a session's write and a live `delta` event answer in the `batch` format: a
/// flat delta, or a sectioned one in two stages, and how to animate it.
public struct DeltaAnswer: Codable, Hashable, Sendable {
    /// A flat answer's animation style (`preciseAnimations`, `reloadSections`, ...).
    public var animation: String?
    /// A flat answer's delta; none over the animation thresholds.
    public var delta: Delta<Int>?
    /// A sectioned answer's animation style for its sections.
    public var sectionAnimation: String?
    /// A sectioned answer's animation style for its items.
    public var itemAnimation: String?
    /// A sectioned answer's first stage: the sections.
    public var sectionDelta: Delta<Int>?
    /// A sectioned answer's second stage: the items, by path.
    public var itemDelta: Delta<ItemPath>?
    /// How many changes the delta holds.
    public var changeCount: Int?
    /// Items before.
    public var oldCount: Int?
    /// Items after.
    public var newCount: Int?

    /// An answer with nothing in it (no delta: a view given it reloads).
    public init() {}

    /// Whether the answer holds a delta to animate (a version over the animation thresholds may not).
    public var hasDelta: Bool { delta != nil || (sectionDelta != nil && itemDelta != nil) }
}

/// A session's answer to a write.
public struct SessionAnswer: Codable, Hashable, Sendable {
    /// The session's id.
    public var id: String
    /// The version the write committed (the `ETag`).
    public var version: Int
    /// The version the delta starts from.
    public var baseVersion: Int?
    /// Items in the session after the write.
    public var count: Int?
    /// Sections in a sectioned session after the write.
    public var sectionCount: Int?
    /// The delta, where the write answers one.
    public var answer: DeltaAnswer

    enum CodingKeys: String, CodingKey { case id, version, baseVersion, count, sectionCount }

    /// Reads an answer: the session's members and the delta beside them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        version = try container.decode(Int.self, forKey: .version)
        baseVersion = try container.decodeIfPresent(Int.self, forKey: .baseVersion)
        count = try container.decodeIfPresent(Int.self, forKey: .count)
        sectionCount = try container.decodeIfPresent(Int.self, forKey: .sectionCount)
        answer = try DeltaAnswer(from: decoder)
    }

    /// Writes the answer as the server spells it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(version, forKey: .version)
        try container.encodeIfPresent(baseVersion, forKey: .baseVersion)
        try container.encodeIfPresent(count, forKey: .count)
        try container.encodeIfPresent(sectionCount, forKey: .sectionCount)
        try answer.encode(to: encoder)
    }
}
