/// Where sessions live. The routes use only this, so a store shared by several replicas
/// (committing each change with a compare-and-set on the version) can take the in-memory
/// store's place without touching them.
package protocol SessionStore: Sendable {
    /// Creates the session, or replaces it (at version 0); true where it was new.
    func put(id: String, options: DiffOptions, collection: JSONCollection) throws(SessionError) -> (SessionSnapshot, created: Bool)

    func snapshot(id: String) throws(SessionError) -> SessionSnapshot

    /// A few rows of a long flat session, `rows(count)` of its `count`, read without the rest
    /// where the store can (a shared store's parts, where this replica holds no copy); nil
    /// where it reads sessions whole (`snapshot`).
    func rows(id: String, _ rows: (Int) -> Range<Int>) throws(SessionError) -> SessionRows?

    /// The same for a window anchored by id (`after`, `before`): `rows(anchor, count)` of its
    /// `count`, `anchor` being the position of the row (an item, or a section) whose id is
    /// `anchorID` (as JSON text), read without the rest where the store can find that row
    /// without them; nil where it reads sessions whole.
    func rows(id: String, anchorID: String, _ rows: (_ anchor: Int, _ count: Int) -> Range<Int>) throws(SessionError) -> AnchoredRows?

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

/// Some of a session's rows: a snapshot holding only them, where they are, and how many the
/// session has.
package struct SessionRows: Sendable {
    package var snapshot: SessionSnapshot
    /// The session's position of the snapshot's first row (an item, or a section).
    package var first: Int
    /// The rows the session holds.
    package var count: Int
    /// The items it holds (`count` where it is flat).
    package var items: Int
}

/// A window anchored by id, read from the parts that hold it.
package enum AnchoredRows: Sendable {
    /// The rows, the anchor's position, and its id as the session holds it (JSON text).
    case rows(SessionRows, anchor: Int, anchorID: String)
    /// The session is flat with ids that may repeat: no id names one row.
    case notUnique
}

extension SessionStore {
    package func rows(id: String, _ rows: (Int) -> Range<Int>) throws(SessionError) -> SessionRows? { nil }
    package func rows(id: String, anchorID: String, _ rows: (_ anchor: Int, _ count: Int) -> Range<Int>) throws(SessionError) -> AnchoredRows? {
        nil
    }
    package var isReady: Bool { true }
    package func follow(_ ids: [String]) {}
    package func loggedSteps(id: String, incarnation: String, from version: UInt64) -> [LoggedState] { [] }
    package func feedStarted(id: String) {}
    package func close() {}
}
