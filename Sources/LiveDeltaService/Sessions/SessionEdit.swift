import LiveCollections

/// What an edit made of a session's collection.
enum EditOutcome {
    /// The new collection, to be diffed against the current one as an update would.
    case collection(JSONCollection)
    /// New flat items, with the delta worked out from the edit itself.
    case flat([JSONItem], owners: DocumentOwners, delta: AnimatedDelta)
    /// New sections, with the delta worked out from the edit itself.
    case sectioned([JSONSection], owners: DocumentOwners, delta: AnimatedSectionedDelta)

    var itemCount: Int {
        switch self {
        case .collection(let collection): collection.itemCount
        case .flat(let items, _, _): items.count
        case .sectioned(let sections, _, _): sections.itemCount
        }
    }

    var footprint: Int {
        switch self {
        case .collection(let collection): SessionFootprint.of(collection)
        case .flat(let items, let owners, _): SessionFootprint.of(owners, items: items.count)
        case .sectioned(let sections, let owners, _): SessionFootprint.of(.sectioned(sections, owners: owners))
        }
    }
}

/// A change worked out from the session as it is when the change runs, under its step: the
/// store hands it the current collection, its options and its item limit.
package struct SessionEdit: Sendable {
    let apply: @Sendable (_ current: JSONCollection, _ options: DiffOptions, _ maxItems: Int) throws(APIError) -> EditOutcome
}
