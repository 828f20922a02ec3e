import LiveCollections

/// What a session holds at one version.
package struct SessionSnapshot: Sendable {
    package var id: String
    /// The session's life (see `OpenSession.incarnation`).
    package var incarnation: String
    package var options: DiffOptions
    package var version: UInt64
    package var collection: JSONCollection
}

/// A committed (or, for a dry run, computed) change to a session.
package struct SessionChange: Sendable {
    package enum Outcome: Sendable {
        case flat(CollectionUpdate<JSONItem>, old: [JSONItem], new: [JSONItem])
        case sectioned(SectionedCollectionUpdate<JSONItem>, old: [JSONSection], new: [JSONSection])
    }

    package var id: String
    /// The session's life the change belongs to.
    package var incarnation: String
    /// The update created the session (from empty).
    package var created: Bool
    package var options: DiffOptions
    package var outcome: Outcome
    /// The documents the outcome's items point into (the session's before the change, and the
    /// request's).
    package var owners: DocumentOwners
    /// For an edit of a flat list: the runs of the new items that are the old ones copied as
    /// they were (`CopiedRun`); empty where unknown.
    package var copied: [CopiedRun] = []

    package var version: UInt64 {
        switch outcome {
        case .flat(let update, _, _): update.version
        case .sectioned(let update, _, _): update.version
        }
    }
}

/// What a change asks of the session's version.
package enum VersionCondition: Sendable, Equatable {
    /// Whatever it is (an update may then create the session).
    case any
    /// The session must exist (`If-Match: *`).
    case exists
    case version(UInt64)
    /// Any of these versions (`If-Match` with a list of tags).
    case anyOf([UInt64])

    /// Whether it names versions (a loss to another change is then a 412, not a retry).
    var namesVersions: Bool {
        switch self {
        case .version, .anyOf: true
        case .any, .exists: false
        }
    }
}
