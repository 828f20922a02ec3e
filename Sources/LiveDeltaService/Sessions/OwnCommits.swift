import MicroHTTP

/// The commits this replica is making to sessions, each from just before storage is asked
/// until the observer has been told of it (or the commit has failed).
///
/// A commit to a followed session logs its step and announces it inside storage's own
/// commit, so the listener may read the step before the committing thread, which has the
/// change in hand, has told the observer. Finding the observer without that version, the
/// listener read the session whole and parsed it: on a million items, about a tenth of a
/// second of CPU, in the middle of the commit's fan-out. It waits for the committing thread
/// instead. The wait is bounded, so a commit stuck on storage costs the listener no more than
/// the bound, after which it reads as before.
// @unchecked Sendable: `versions` is read and written inside `condition.withLock` only.
final class OwnCommits: @unchecked Sendable {  // `versions` under the lock only; see above
    private let condition = WaitCondition()
    /// The version each session is being committed at. A session's commits run one at a time
    /// (under its step lock), so one version a session.
    private var versions: [String: UInt64] = [:]

    func begin(_ id: String, version: UInt64) {
        condition.withLock { versions[id] = version }
    }

    func end(_ id: String) {
        condition.withLock {
            versions[id] = nil
            condition.broadcast()
        }
    }

    /// Waits while this replica is committing `version` of `id`, for at most `bound`.
    func waitForCommit(of id: String, version: UInt64, atMost bound: Duration) {
        condition.withLock {
            guard versions[id] == version else { return }
            let deadline = WaitCondition.Deadline(after: bound)
            while versions[id] == version {
                if !condition.wait(until: deadline) { return }
            }
        }
    }
}
