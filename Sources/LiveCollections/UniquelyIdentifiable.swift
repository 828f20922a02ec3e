/// A value with a stable identity and comparable content.
///
/// `uniqueID` says *which* item this is; `==` says whether two versions of the same item
/// look the same. Two items with equal ids but unequal content become a reload; an id that
/// appears in only one collection becomes a deletion or an insertion.
public protocol UniquelyIdentifiable: Equatable {
    /// The type this value was built from (itself, unless a data factory built it).
    associatedtype RawType = Self
    /// The type of the identity.
    associatedtype UniqueIDType: Hashable & Sendable

    /// The value this one was built from.
    var rawData: RawType { get }
    /// Which item this is: stable across versions of the item.
    var uniqueID: UniqueIDType { get }

    /// A hash of `uniqueID` for matching ids: equal ids must have equal hashes. By default
    /// `uniqueID.hashValue`; a type that keeps a well-mixed hash of its id may return that and
    /// spare hashing it again. (A diff hashes UUID ids, and String ids where all are ASCII,
    /// itself: `KeyedIdentityHash`.)
    var identityHash: Int { get }

    /// Whether `other` has the same id. By default `uniqueID == other.uniqueID`; a type whose
    /// ids cost something to build (a reference to count, a string to make) may compare them
    /// where they lie.
    func hasSameID(as other: Self) -> Bool
}

extension UniquelyIdentifiable where RawType == Self {
    /// A value built from itself is its own raw data.
    public var rawData: Self { self }
}

extension UniquelyIdentifiable {
    /// `uniqueID.hashValue`.
    @inlinable
    public var identityHash: Int { uniqueID.hashValue }

    /// Compares `uniqueID`s.
    @inlinable
    public func hasSameID(as other: Self) -> Bool { uniqueID == other.uniqueID }
}

/// A section with its own identity and content, holding identifiable items.
///
/// Item ids are unique across the whole sectioned collection, so an item can move between
/// sections. Section ids need not differ from item ids.
public protocol UniquelyIdentifiableSection: UniquelyIdentifiable {
    /// The type of the section's rows.
    associatedtype Item: UniquelyIdentifiable

    /// The section's rows, in order.
    var items: [Item] { get }

    /// Whether the section's own content (everything but its items, a header title for
    /// example) equals `other`'s. A surviving section for which this is false is reloaded.
    func hasEqualSectionContent(to other: Self) -> Bool
}

/// Builds the diffed type from a raw type, so that one raw type can have different
/// equality (and so different reloads) in different places.
public protocol UniquelyIdentifiableDataFactory {
    associatedtype RawType
    /// The type it builds.
    associatedtype UniquelyIdentifiableType: UniquelyIdentifiable

    /// Builds the diffed value from `rawType`.
    func buildUniquelyIdentifiableDatum(_ rawType: RawType) -> UniquelyIdentifiableType
}

/// A ready-made section: an id, a header (the section's own content) and items.
public struct ItemSection<ID: Hashable & Sendable, Header: Equatable, Item: UniquelyIdentifiable>:
    UniquelyIdentifiableSection
{
    /// The section's identity.
    public var id: ID
    /// The section's own content: a change to it reloads the section.
    public var header: Header
    /// The section's rows.
    public var items: [Item]

    /// A section with `id`, `header` and `items`.
    public init(id: ID, header: Header, items: [Item]) {
        self.id = id
        self.header = header
        self.items = items
    }

    /// `id`.
    public var uniqueID: ID { id }

    /// Compares the headers.
    public func hasEqualSectionContent(to other: Self) -> Bool { header == other.header }
}

extension ItemSection: Sendable where Header: Sendable, Item: Sendable {}
