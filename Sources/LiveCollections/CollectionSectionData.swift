/// What an update, append or dry run of a sectioned holder returned.
public struct SectionedCollectionUpdate<Item: Sendable>: Sendable {
    /// How the client should animate the section stage.
    public var sectionAnimation: AnimationStyle
    /// How the client should animate the item stage.
    public var itemAnimation: AnimationStyle
    /// The section stage, whenever it was computed.
    public var sectionDelta: IndexDelta?
    /// The item stage, whenever it was computed; always when both styles are precise.
    public var itemDelta: IndexPathDelta?
    /// The items whose id is gone from the whole collection.
    public var deletedItems: [Item]
    /// The version the delta starts from.
    public var baseVersion: UInt64
    /// The version after the change (`baseVersion` for a dry run).
    public var version: UInt64
    /// Both stages wherever they were worked out, also where the thresholds keep them from
    /// the answer (see `AnimationPolicy.keepsExactDelta`): what live windows are projected from.
    @usableFromInline package var exact: SectionedDelta?

    @usableFromInline package init(
        sectionAnimation: AnimationStyle, itemAnimation: AnimationStyle,
        sectionDelta: IndexDelta?, itemDelta: IndexPathDelta?, deletedItems: [Item],
        baseVersion: UInt64, version: UInt64, exact: SectionedDelta? = nil
    ) {
        self.sectionAnimation = sectionAnimation
        self.itemAnimation = itemAnimation
        self.sectionDelta = sectionDelta
        self.itemDelta = itemDelta
        self.deletedItems = deletedItems
        self.baseVersion = baseVersion
        self.version = version
        self.exact = exact ?? SectionedDelta(sectionDelta, itemDelta)
    }
}

/// A thread-safe holder of a sectioned collection whose items may move between sections.
///
/// Updates are serialized as in `CollectionData`.
public final class CollectionSectionData<Section: UniquelyIdentifiableSection & Sendable>: Sendable
where Section.Item: Sendable {
    /// The type of the rows.
    public typealias Item = Section.Item

    @usableFromInline let store: VersionedValue<[Section]>

    /// `version` is where its versions start (0 for a new collection; another for one restored
    /// from storage).
    public init(_ sections: [Section] = [], policy: AnimationPolicy = AnimationPolicy(), version: UInt64 = 0)
        throws(DuplicateIdentifierError)
    {
        _ = try SectionedMatch(sections, [])
        store = VersionedValue(sections, policy: policy, version: version)
    }

    /// The current sections.
    public var sections: [Section] { store.snapshot.value }
    /// How many sections there are.
    public var sectionCount: Int { sections.count }
    /// All items in all sections.
    public var count: Int { sections.reduce(0) { $0 + $1.items.count } }
    /// Whether no section holds an item (sections without items may exist).
    public var isEmpty: Bool { sections.allSatisfy { $0.items.isEmpty } }
    /// Grows by one with every committed update or append.
    public var version: UInt64 { store.snapshot.version }

    /// The sections and their version, read together.
    public var versionedSections: (sections: [Section], version: UInt64) {
        let snapshot = store.snapshot
        return (snapshot.value, snapshot.version)
    }
    /// How many items section `section` holds.
    public func rowCount(forSection section: Int) -> Int { sections[section].items.count }
    /// The section at `section`.
    public subscript(section: Int) -> Section { sections[section] }
    /// The item at `path`.
    public subscript(path: ItemPath) -> Item { sections[path.section].items[path.item] }

    /// The threshold rules applied to the next update; setting it does not change the version.
    public var policy: AnimationPolicy {
        get { store.snapshot.policy }
        set { store.setPolicy(newValue) }
    }

    /// Replaces the sections and answers the delta from the previous ones.
    @inlinable @discardableResult
    public func update(_ newSections: [Section], ifVersion: UInt64? = nil) throws(CollectionDataError)
        -> SectionedCollectionUpdate<Item>
    {
        try store.write(ifVersion: ifVersion) { current throws(CollectionDataError) in
            (newSections, try Self.diff(current, newSections, committing: true))
        }
    }

    /// Adds whole sections at the end. The delta is their insertions and always precise.
    @inlinable @discardableResult
    public func append(_ newSections: [Section], ifVersion: UInt64? = nil) throws(CollectionDataError)
        -> SectionedCollectionUpdate<Item>
    {
        try store.write(ifVersion: ifVersion) { current throws(CollectionDataError) in
            let combined = current.value + newSections
            do throws(DuplicateIdentifierError) { _ = try SectionedMatch(combined, []) } catch {
                throw .duplicateIdentifier(error)
            }
            let result = SectionedCollectionUpdate<Item>(
                sectionAnimation: .preciseAnimations, itemAnimation: .preciseAnimations,
                sectionDelta: IndexDelta(insertions: Array(current.value.count..<combined.count)),
                itemDelta: IndexPathDelta(), deletedItems: [],
                baseVersion: current.version, version: current.version + 1)
            return (combined, result)
        }
    }

    /// The delta an update to `newSections` would give, committing nothing (`ifVersion` as in
    /// `CollectionData.calculateDelta`).
    @inlinable
    public func calculateDelta(_ newSections: [Section], ifVersion: UInt64? = nil) throws(CollectionDataError)
        -> SectionedCollectionUpdate<Item>
    {
        let current = store.snapshot
        try current.require(ifVersion)
        return try Self.diff(current, newSections, committing: false)
    }

    @inlinable
    static func diff(
        _ current: Versioned<[Section]>, _ newSections: [Section], committing: Bool
    ) throws(CollectionDataError) -> SectionedCollectionUpdate<Item> {
        let animated: AnimatedSectionedDelta
        do throws(DuplicateIdentifierError) {
            animated = try current.policy.animatedDelta(from: current.value, to: newSections)
        } catch {
            throw .duplicateIdentifier(error)
        }
        return SectionedCollectionUpdate(
            sectionAnimation: animated.sectionAnimation, itemAnimation: animated.itemAnimation,
            sectionDelta: animated.sectionDelta, itemDelta: animated.itemDelta,
            deletedItems: animated.deletedItemPaths.map { current.value[$0.section].items[$0.item] },
            baseVersion: current.version, version: current.version + (committing ? 1 : 0), exact: animated.exact)
    }
}
