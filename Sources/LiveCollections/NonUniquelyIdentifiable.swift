/// A value whose id may repeat within a collection.
///
/// The k-th occurrence of an id in the old collection is the same item as the k-th occurrence
/// of that id in the new one: `[A, B, A, C, D, B]` is identified as `[A1, B1, A2, C1, D1, B2]`.
public protocol NonUniquelyIdentifiable: Equatable {
    /// The type of the id, which may repeat.
    associatedtype NonUniqueIDType: Hashable & Sendable
    /// The id: values with equal ids are told apart by how often it was seen before.
    var nonUniqueID: NonUniqueIDType { get }
}

/// The identity of one occurrence of a non-unique id.
public struct OccurrenceID<Base: Hashable & Sendable>: Hashable, Sendable {
    /// The id, as the value gives it.
    public var id: Base
    /// 1 for the first occurrence, 2 for the second, and so on.
    public var occurrence: Int

    package init(id: Base, occurrence: Int) {
        self.id = id
        self.occurrence = occurrence
    }
}

/// A non-unique value made unique by its occurrence number.
public struct NonUniqueDatum<Base: NonUniquelyIdentifiable>: UniquelyIdentifiable {
    /// The wrapped value.
    public let rawData: Base
    /// 1 for the first value with this id, 2 for the second, and so on.
    public let occurrence: Int

    package init(rawData: Base, occurrence: Int) {
        self.rawData = rawData
        self.occurrence = occurrence
    }

    /// The id together with its occurrence.
    public var uniqueID: OccurrenceID<Base.NonUniqueIDType> {
        OccurrenceID(id: rawData.nonUniqueID, occurrence: occurrence)
    }

    /// Content equality: the wrapped values. Occurrences are part of the identity.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawData == rhs.rawData }

    /// Numbers every value by how often its id has been seen before it.
    public static func numbering(_ values: some Sequence<Base>) -> [NonUniqueDatum<Base>] {
        numbering(sections: CollectionOfOne(values))[0]
    }
}

extension NonUniqueDatum {
    /// Numbers values across several sections in order, as one collection: an item that moves
    /// to another section keeps its identity.
    public static func numbering<Sections: Sequence>(sections: Sections) -> [[NonUniqueDatum<Base>]]
    where Sections.Element: Sequence<Base> {
        var seen: [Base.NonUniqueIDType: Int] = [:]
        return sections.map { section in
            section.map { value in
                let occurrence = seen[value.nonUniqueID, default: 0] + 1
                seen[value.nonUniqueID] = occurrence
                return NonUniqueDatum(rawData: value, occurrence: occurrence)
            }
        }
    }
}

extension NonUniqueDatum: Sendable where Base: Sendable {}

/// A `CollectionData` holding non-unique values; `update(raw:)` takes the plain values.
public typealias NonUniqueCollectionData<Base: NonUniquelyIdentifiable & Sendable> =
    CollectionData<NonUniqueDatum<Base>>
