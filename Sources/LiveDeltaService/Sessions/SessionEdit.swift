import LiveCollections

/// What an edit made of a session's collection.
enum EditOutcome {
    /// The new collection, to be diffed against the current one as an update would.
    case collection(JSONCollection)
    /// New flat items, with the delta worked out from the edit itself, and the runs of them
    /// that are the held items copied as they were.
    case flat([JSONItem], owners: DocumentOwners, delta: AnimatedDelta, copied: [CopiedRun] = [])
    /// New sections, with the delta worked out from the edit itself.
    case sectioned([JSONSection], owners: DocumentOwners, delta: AnimatedSectionedDelta)

    var itemCount: Int {
        switch self {
        case .collection(let collection): collection.itemCount
        case .flat(let items, _, _, _): items.count
        case .sectioned(let sections, _, _): sections.itemCount
        }
    }

    var footprint: Int {
        switch self {
        case .collection(let collection): SessionFootprint.of(collection)
        case .flat(let items, let owners, _, _): SessionFootprint.of(owners, items: items.count)
        case .sectioned(let sections, let owners, _): SessionFootprint.of(.sectioned(sections, owners: owners))
        }
    }
}

/// Items of a new flat list that are a held list's copied as they were, text and all: `count`
/// of them from `old` in the held list, at `new` in the new one. A shared store's commit keeps
/// a stored part these cover without comparing its items one by one (`PartPlanner`).
package struct CopiedRun: Sendable, Equatable {
    let old: Int
    let new: Int
    let count: Int
}

/// A change worked out from the session as it is when the change runs, under its step: the
/// store hands it the current collection, its options and its item limit.
package struct SessionEdit: Sendable {
    let apply: @Sendable (_ current: JSONCollection, _ options: DiffOptions, _ maxItems: Int) throws(APIError) -> EditOutcome
}
