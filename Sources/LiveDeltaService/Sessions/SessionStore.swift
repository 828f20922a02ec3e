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

package enum SessionError: Error, Sendable {
    case notFound(id: String)
    /// The condition named a version that is not the current one; `current` is nil where the
    /// session does not exist (any more).
    case versionMismatch(expected: VersionCondition, current: UInt64?)
    /// Items posted to a sectioned session, or sections to a flat one.
    case kindMismatch(sessionIsSectioned: Bool)
    case duplicate(DuplicateIdentifierError)
    case tooManyItems(limit: Int, count: Int)
    case storeFull(limit: Int)
    /// The session would hold more bytes than all sessions may hold together.
    case tooLarge(limit: Int, bytes: Int)
    /// The sessions in use hold all the bytes sessions may hold.
    case bytesFull(limit: Int)
    /// The session's tenant holds all the sessions (`bytes` false) or bytes one tenant may,
    /// none of them idle; other tenants' sessions are never evicted for it.
    case tenantFull(limit: Int, bytes: Bool)
    /// The session was replaced, with options that read items differently, while this request
    /// was being read; reading again with `options` will do.
    case optionsChanged(DiffOptions)
    /// Other replicas kept committing first, past the store's retries.
    case conflict
    /// The shared store cannot be reached, or did not answer in time.
    case storeUnavailable(String)
    /// A failure of the store's own (a 500, logged).
    case internalFailure(String)
    /// An edit refused the change (an operation does not fit the session): nothing was applied.
    case refused(APIError)
}

/// Where sessions live. The routes use only this, so a store shared by several replicas
/// (committing each change with a compare-and-set on the version) can take the in-memory
/// store's place without touching them.
package protocol SessionStore: Sendable {
    /// Creates the session, or replaces it (at version 0); true where it was new.
    func put(id: String, options: DiffOptions, collection: JSONCollection) throws(SessionError) -> (SessionSnapshot, created: Bool)

    func snapshot(id: String) throws(SessionError) -> SessionSnapshot

    /// The options a session reads bodies with; nil where there is no such session.
    func options(id: String) -> DiffOptions?

    /// Diffs the session's data against `collection` (read with `readWith`) and, where `commit`
    /// is true, makes it the next version. A committing update to an unknown session under
    /// `.any` creates it from empty with `readWith` as its options.
    func update(
        id: String, to collection: JSONCollection, readWith: DiffOptions, condition: VersionCondition, commit: Bool
    ) throws(SessionError) -> SessionChange

    /// Appends items (sectioned: whole sections) at the end.
    func append(id: String, _ collection: JSONCollection, readWith: DiffOptions, condition: VersionCondition) throws(SessionError) -> SessionChange

    /// Applies an edit, worked out from the session as it is, as the next version (or refuses
    /// it whole). The session must exist.
    func edit(id: String, condition: VersionCondition, _ edit: SessionEdit) throws(SessionError) -> SessionChange

    func delete(id: String, condition: VersionCondition) throws(SessionError)

    var statistics: SessionStatistics { get }

    /// Whether the store can serve sessions now (`GET /ready`).
    var isReady: Bool { get }

    /// Who is told of each committed change, replacement and end, in each session's order
    /// (set once, before the store serves).
    func observe(with observer: any SessionObserver)

    /// The observer follows these sessions now: a store shared by replicas tells it of their
    /// steps on every replica from now on (called again while they are followed).
    func follow(_ ids: [String])

    /// The session's steps from `version` of life `incarnation` on, as a shared store's log
    /// keeps them (the state at `version` first), so that a subscriber that left one replica
    /// resumes on another, or on one restarted, with the versions it missed; empty where the
    /// log does not reach back that far, and for a store whose feeds keep their own history.
    func loggedSteps(id: String, incarnation: String, from version: UInt64) -> [LoggedState]

    /// A feed of the session has just started from a read of it (and its log): a shared store
    /// has the log read again for the observer, so that a step committed while the feed was
    /// being started reaches it too.
    func feedStarted(id: String)

    /// Ends the threads the store started (a shared store's listener); the store serves
    /// nothing live after.
    func close()
}

/// A step of a session's log, as the session after it.
package struct LoggedState: Sendable {
    package var snapshot: SessionSnapshot
    package var appended: Bool
    package var baseVersion: UInt64?

    package init(snapshot: SessionSnapshot, appended: Bool, baseVersion: UInt64?) {
        self.snapshot = snapshot
        self.appended = appended
        self.baseVersion = baseVersion
    }
}

extension SessionStore {
    package var isReady: Bool { true }
    package func follow(_ ids: [String]) {}
    package func loggedSteps(id: String, incarnation: String, from version: UInt64) -> [LoggedState] { [] }
    package func feedStarted(id: String) {}
    package func close() {}
}

/// Why a session ended.
package enum SessionEnd: String, Sendable {
    case deleted, expired, evicted
}

/// Told of every session's steps as they commit. For any one session the calls come in the
/// order of its versions and lives; they may come on any thread and should be quick (they may
/// run while the session's lock is held).
package protocol SessionObserver: Sendable {
    func committed(_ change: SessionChange)
    /// Created or replaced (PUT): a new life, at version 0.
    func replaced(_ snapshot: SessionSnapshot)
    func ended(id: String, incarnation: String, reason: SessionEnd)

    /// A step read back from shared storage, as the session after it: the observer works out
    /// the change from what it holds at `baseVersion` (nil: unknown), or starts from it whole.
    func stored(_ snapshot: SessionSnapshot, appended: Bool, baseVersion: UInt64?)
    /// Whether it wants a session's steps: it holds the session, from a read, and follows it.
    func follows(id: String) -> Bool
    /// The sessions it follows now.
    var followedIDs: [String] { get }
    /// The life of a followed session it holds now.
    func incarnation(of id: String) -> String?
}

package struct SessionStatistics: Sendable, Equatable {
    package var open: Int
    package var evicted: Int
    package var expired: Int

    package init(open: Int, evicted: Int, expired: Int) {
        self.open = open
        self.evicted = evicted
        self.expired = expired
    }
}
