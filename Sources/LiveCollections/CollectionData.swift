/// What an update, append or dry run of a flat holder returned.
public struct CollectionUpdate<Item: Sendable>: Sendable {
    /// How the client should animate the change.
    public var animation: AnimationStyle
    /// Present whenever computed; always when `animation` is precise.
    public var delta: IndexDelta?
    /// The items whose id is gone.
    public var deletedItems: [Item]
    /// The version the delta starts from.
    public var baseVersion: UInt64
    /// The version after the change (`baseVersion` for a dry run, which commits nothing).
    public var version: UInt64
    /// The delta wherever it was worked out, also where the thresholds keep it from `delta`
    /// (see `AnimatedDelta.exact`).
    @usableFromInline package var exactDelta: IndexDelta?

    @usableFromInline package init(
        animation: AnimationStyle, delta: IndexDelta?, deletedItems: [Item],
        baseVersion: UInt64, version: UInt64, exactDelta: IndexDelta? = nil
    ) {
        self.animation = animation
        self.delta = delta
        self.exactDelta = exactDelta ?? delta
        self.deletedItems = deletedItems
        self.baseVersion = baseVersion
        self.version = version
    }
}

/// A thread-safe holder of a flat collection that answers every update with its delta.
///
/// Updates are serialized: every returned delta is relative to the state just before it, and
/// the version grows by one per committed update or append.
public final class CollectionData<Item: UniquelyIdentifiable & Sendable>: Sendable {
    @usableFromInline let store: VersionedValue<[Item]>
    @usableFromInline let build: @Sendable ([Item.RawType]) -> [Item]

    /// A holder whose `update(raw:)` builds items with `build`. `version` is where its versions
    /// start (0 for a new collection; another for one restored from storage).
    package convenience init(
        items: [Item], policy: AnimationPolicy = AnimationPolicy(), version: UInt64 = 0,
        build: @escaping @Sendable ([Item.RawType]) -> [Item]
    ) throws(DuplicateIdentifierError) {
        _ = try matchItems(items, [])
        self.init(checked: items, policy: policy, version: version, build: build)
    }

    /// A holder of items whose identities are already known to be distinct.
    fileprivate init(checked items: [Item], policy: AnimationPolicy, version: UInt64, build: @escaping @Sendable ([Item.RawType]) -> [Item]) {
        store = VersionedValue(items, policy: policy, version: version)
        self.build = build
    }

    /// The current items.
    public var items: [Item] { store.snapshot.value }
    /// How many items there are.
    public var count: Int { items.count }
    /// Whether there are no items.
    public var isEmpty: Bool { items.isEmpty }
    /// Grows by one with every committed update or append.
    public var version: UInt64 { store.snapshot.version }
    /// The item at `index`.
    public subscript(index: Int) -> Item { items[index] }

    /// The items and their version, read together.
    public var versionedItems: (items: [Item], version: UInt64) {
        let snapshot = store.snapshot
        return (snapshot.value, snapshot.version)
    }

    /// The thresholds and delegate used by later updates.
    public var policy: AnimationPolicy {
        get { store.snapshot.policy }
        set { store.setPolicy(newValue) }
    }

    /// Replaces the items and answers the delta from the previous ones.
    ///
    /// - Parameters:
    ///   - newItems: the collection as it is now.
    ///   - ifVersion: when given, the update happens only if it is the current version.
    @inlinable @discardableResult
    public func update(_ newItems: [Item], ifVersion: UInt64? = nil) throws(CollectionDataError) -> CollectionUpdate<Item> {
        try store.write(ifVersion: ifVersion) { current throws(CollectionDataError) in
            let result = try Self.diff(current, newItems, committing: true)
            return (newItems, result)
        }
    }

    /// Builds items from raw values (through the holder's factory) and updates with them.
    @inlinable @discardableResult
    public func update(raw: [Item.RawType], ifVersion: UInt64? = nil) throws(CollectionDataError) -> CollectionUpdate<Item> {
        try update(build(raw), ifVersion: ifVersion)
    }

    /// Adds items at the end. The delta is their insertions and always precise.
    @inlinable @discardableResult
    public func append(_ newItems: [Item], ifVersion: UInt64? = nil) throws(CollectionDataError) -> CollectionUpdate<Item> {
        try store.write(ifVersion: ifVersion) { current throws(CollectionDataError) in
            let combined = current.value + newItems
            if let duplicate = appendedDuplicate(current.value, newItems) {
                throw .duplicateIdentifier(
                    DuplicateIdentifierError(
                        id: combined[duplicate.second].uniqueID, collection: .old, level: .item, firstPosition: .index(duplicate.first),
                        secondPosition: .index(duplicate.second)))
            }
            let delta = IndexDelta(insertions: Array(current.value.count..<combined.count))
            let result = CollectionUpdate<Item>(
                animation: .preciseAnimations, delta: delta, deletedItems: [],
                baseVersion: current.version, version: current.version + 1)
            return (combined, result)
        }
    }

    /// Replaces the items with ones a caller worked out from the items at `baseVersion`, with
    /// the delta it worked out too (for example from a list of edits, without diffing whole
    /// lists). The delta must replay from those items to `newItems` as `update` would answer
    /// (the same deletions, insertions and reloads, no more moves); the version check makes
    /// sure it starts from the items it was worked out from.
    @inlinable @discardableResult
    package func commit(_ newItems: [Item], delta: AnimatedDelta, baseVersion: UInt64) throws(CollectionDataError) -> CollectionUpdate<Item> {
        try store.write(ifVersion: baseVersion) { current throws(CollectionDataError) in
            let result = CollectionUpdate<Item>(
                animation: delta.animation, delta: delta.delta, deletedItems: delta.deletedIndices.map { current.value[$0] },
                baseVersion: current.version, version: current.version + 1, exactDelta: delta.exact)
            return (newItems, result)
        }
    }

    /// The delta an update to `newItems` would give, committing nothing.
    ///
    /// - Parameters:
    ///   - newItems: the collection the delta goes to.
    ///   - ifVersion: when given, checked against the same state the delta is computed from.
    @inlinable
    public func calculateDelta(_ newItems: [Item], ifVersion: UInt64? = nil) throws(CollectionDataError) -> CollectionUpdate<Item> {
        let current = store.snapshot
        try current.require(ifVersion)
        return try Self.diff(current, newItems, committing: false)
    }

    /// The delta to the values `raw` builds, without committing it.
    @inlinable
    public func calculateDelta(raw: [Item.RawType], ifVersion: UInt64? = nil) throws(CollectionDataError) -> CollectionUpdate<Item> {
        try calculateDelta(build(raw), ifVersion: ifVersion)
    }

    @inlinable
    static func diff(
        _ current: Versioned<[Item]>, _ newItems: [Item], committing: Bool
    ) throws(CollectionDataError) -> CollectionUpdate<Item> {
        let animated: AnimatedDelta
        do throws(DuplicateIdentifierError) {
            animated = try current.policy.animatedDelta(from: current.value, to: newItems)
        } catch {
            throw .duplicateIdentifier(error)
        }
        return CollectionUpdate(
            animation: animated.animation, delta: animated.delta,
            deletedItems: animated.deletedIndices.map { current.value[$0] },
            baseVersion: current.version, version: current.version + (committing ? 1 : 0), exactDelta: animated.exact)
    }
}

extension CollectionData where Item.RawType == Item {
    /// A holder of `items`. `version` is where its versions start (0 for a new collection; another for one restored from storage).
    public convenience init(_ items: [Item] = [], policy: AnimationPolicy = AnimationPolicy(), version: UInt64 = 0)
        throws(DuplicateIdentifierError)
    {
        try self.init(items: items, policy: policy, version: version, build: { $0 })
    }
}

extension CollectionData {
    /// A holder fed raw values through a data factory.
    public convenience init<Factory: UniquelyIdentifiableDataFactory & Sendable>(
        dataFactory: Factory, rawData: [Factory.RawType] = [], policy: AnimationPolicy = AnimationPolicy()
    ) throws(DuplicateIdentifierError)
    where Factory.UniquelyIdentifiableType == Item, Factory.RawType == Item.RawType {
        try self.init(
            items: rawData.map(dataFactory.buildUniquelyIdentifiableDatum), policy: policy,
            build: { $0.map(dataFactory.buildUniquelyIdentifiableDatum) })
    }

    /// A holder of non-unique values, numbered by occurrence on every update.
    public convenience init<Base>(nonUnique values: [Base] = [], policy: AnimationPolicy = AnimationPolicy())
    where Item == NonUniqueDatum<Base> {
        // Numbered values never repeat an identity: there is nothing to check.
        self.init(checked: NonUniqueDatum.numbering(values), policy: policy, version: 0, build: NonUniqueDatum.numbering)
    }
}
