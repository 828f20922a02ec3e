/// A count threads wait on: `signal` adds one and wakes a waiter, `wait` takes one or sleeps
/// until there is one.
// @unchecked Sendable: `count` is read and written inside `condition.withLock` only.
package final class CountingSignal: @unchecked Sendable {  // `count` under the lock only; see above
    private let condition = WaitCondition()
    private var count = 0

    package init() {}

    package func signal() {
        condition.withLock {
            count += 1
            condition.signal()
        }
    }

    package func wait() {
        condition.withLock {
            while count == 0 { condition.wait() }
            count -= 1
        }
    }

    /// Like `wait`, giving up after `seconds`; true where a signal was taken.
    package func wait(seconds: Int) -> Bool {
        let deadline = WaitCondition.Deadline(after: .seconds(seconds))
        return condition.withLock {
            while count == 0 {
                if !condition.wait(until: deadline) { return false }
            }
            count -= 1
            return true
        }
    }
}
