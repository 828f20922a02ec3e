import MicroHTTP

/// Tells the requests that wait on an `Idempotency-Key` in this process that a request holding
/// a key finished here (kept its answer or let its key go): each finish counts one more and wakes
/// them all, and each looks at its own key again. Waiters are few (retries that overlap their
/// first request), so one signal for every key costs less than a table of them.
// @unchecked Sendable: `finishes` is read and written inside `condition.withLock` only.
final class FinishSignal: @unchecked Sendable {  // `finishes` under the lock only; see above
    private let condition = WaitCondition()
    private var finishes: UInt64 = 0

    /// The finishes so far: read before looking at a key, so that a finish in between ends the
    /// wait that follows at once.
    var count: UInt64 { condition.withLock { finishes } }

    func finished() {
        condition.withLock {
            finishes &+= 1
            condition.broadcast()
        }
    }

    /// Waits until a finish after the `seen`th, or until `duration` has passed.
    func wait(after seen: UInt64, for duration: Duration) {
        let deadline = WaitCondition.Deadline(after: duration)
        condition.withLock {
            while finishes == seen {
                if !condition.wait(until: deadline) { return }
            }
        }
    }
}
