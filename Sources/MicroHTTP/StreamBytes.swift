import Synchronization

/// Bytes written to streams: one event sent to thousands of subscribers is one `StreamBytes`,
/// held by each stream's queue until that stream has sent it, never copied per stream.
package final class StreamBytes: Sendable {
    package let bytes: [UInt8]
    /// Stream queues that hold these bytes now. Under its own lock, so that a budget counts
    /// them once, however many streams hold them, and frees them when the last lets go.
    private let holders = Mutex<Int>(0)

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var count: Int { bytes.count }

    /// One more stream holds the bytes; the first counts them against `budget` (false,
    /// holding nothing, where they do not fit).
    func hold(in budget: UnsentBudget?) -> Bool {
        holders.withLock { holders in
            if holders == 0, let budget, !budget.reserve(bytes.count) { return false }
            holders += 1
            return true
        }
    }

    /// A stream has sent the bytes, or dropped them; the last gives them back to `budget`.
    func release(from budget: UnsentBudget?) {
        holders.withLock { holders in
            holders -= 1
            if holders == 0 { budget?.free(bytes.count) }
        }
    }
}

/// The bytes written to streams and not yet sent, all streams together: each `StreamBytes`
/// counts once while any stream holds it. A write that would pass `limit` is refused, so
/// clients that do not read cannot make the process hold more than `limit` for them, whatever
/// the sessions' sizes and however many connections there are.
///
/// One budget serves the streams of one writer (a live hub): a `StreamBytes` is counted by
/// the budget of the stream that first holds it.
package final class UnsentBudget: Sendable {
    package let limit: Int
    private let used = Atomic<Int>(0)

    package init(limit: Int) { self.limit = limit }

    /// Bytes held now.
    package var bytes: Int { used.load(ordering: .relaxed) }

    func reserve(_ count: Int) -> Bool {
        guard used.add(count, ordering: .relaxed).newValue <= limit else {
            used.subtract(count, ordering: .relaxed)
            return false
        }
        return true
    }

    func free(_ count: Int) { used.subtract(count, ordering: .relaxed) }
}
