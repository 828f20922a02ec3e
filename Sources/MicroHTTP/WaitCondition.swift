#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A mutex and a condition on it, for the few places a thread sleeps until another wakes it.
/// Timed waits run on the monotonic clock: setting the wall clock neither ends a wait early nor
/// stretches it. (Pthreads, which ThreadSanitizer sees.)
// @unchecked Sendable: the pthread objects are made once, used only through pthread calls
// (which are thread-safe), and freed in deinit, when no thread can be using them.
package final class WaitCondition: @unchecked Sendable {  // thread-safe pthread calls only; see above
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` holding the mutex; the state the owner guards with it is read and written
    /// only here.
    package func withLock<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Inside `withLock` only: lets the mutex go until woken (perhaps spuriously: callers wait
    /// in a loop on their state), then holds it again.
    package func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Inside `withLock` only: as `wait`, giving up at `deadline`; false where it has passed.
    package func wait(until deadline: Deadline) -> Bool {
        var time = deadline.time
        return pthread_cond_timedwait(condition, mutex, &time) == 0
    }

    /// Wakes one waiter (call it holding the mutex, so that no wake-up falls between a
    /// waiter's look at the state and its wait).
    package func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every waiter (holding the mutex, as `signal`).
    package func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// A moment on the monotonic clock.
    package struct Deadline: Sendable {
        fileprivate let time: timespec

        /// `duration` from now.
        package init(after duration: Duration) {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let (seconds, attoseconds) = duration.components
            let nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
            now.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
            now.tv_nsec = nanoseconds % 1_000_000_000
            time = now
        }
    }
}
