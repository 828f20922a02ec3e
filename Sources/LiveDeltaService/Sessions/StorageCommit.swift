/// What a commit may replace.
package enum StoredExpectation: Sendable {
    /// No session: the commit creates it.
    case absent
    /// Whatever is there (a replacement).
    case any
    /// Exactly this version of this incarnation.
    case version(UInt64, incarnation: String)
}

/// A collection's bytes for a commit: its parts, sent with it (all of them, or only those that
/// changed since the version it replaces), or written beforehand (`stage`), so that the commit
/// itself, made while others wait for the session, is small.
package enum CommitData {
    case parts(PartPlan)
    case staged(any StagedData)
}

/// Bytes written beside a session by `SharedStorage.stage`, until a commit takes them or
/// `finish` drops them (or, should the process die first, a short expiry does). The storage's
/// own; it belongs to the one request that staged it.
package protocol StagedData: AnyObject {}

package enum CommitOutcome: Sendable {
    /// Committed; the version it replaced (nil where there was no session).
    case committed(previous: UInt64?)
    /// Something else was stored (its version; nil: nothing).
    case conflict(current: UInt64?)
}

package enum DeleteOutcome: Sendable {
    case deleted
    case mismatch(current: UInt64)
    case absent
}
