#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Tells the requests that wait on an `Idempotency-Key` in this process that a request holding
/// a key finished here (kept its answer or let its key go): each finish counts one more and wakes
/// them all, and each looks at its own key again. Waiters are few (retries that overlap their
/// first request), so one signal for every key costs less than a table of them. (A pthread
/// condition, which ThreadSanitizer sees.)
final class FinishSignal: @unchecked Sendable {  // `finishes` is read and written under `mutex` only
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var finishes: UInt64 = 0

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Deadlines on the monotonic clock: setting the wall clock neither ends a wait early nor
        // stretches it.
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

    /// The finishes so far: read before looking at a key, so that a finish in between ends the
    /// wait that follows at once.
    var count: UInt64 {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return finishes
    }

    func finished() {
        pthread_mutex_lock(mutex)
        finishes &+= 1
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until a finish after the `seen`th, or until `duration` has passed.
    func wait(after seen: UInt64, for duration: Duration) {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = duration.components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while finishes == seen {
            if pthread_cond_timedwait(condition, mutex, &deadline) != 0 { return }
        }
    }
}
