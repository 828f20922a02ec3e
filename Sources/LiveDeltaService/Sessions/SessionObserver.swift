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
    /// A change a shared store committed on this replica, told as soon as it commits: the
    /// observer takes it where it follows the step it holds (the step read back from storage
    /// later is then the same version, passed over), for its delta is the writer's own, where a
    /// step read back would be worked out again (and, over the data-count threshold, not at all).
    func committedHere(_ change: SessionChange)
    /// Whether it wants a session's steps: it holds the session, from a read, and follows it.
    func follows(id: String) -> Bool
    /// The sessions it follows now.
    var followedIDs: [String] { get }
    /// Whether it holds this version of the session, or a later one of the same life, already:
    /// a step read back from storage then need not be read.
    func holds(id: String, incarnation: String, version: UInt64) -> Bool
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
