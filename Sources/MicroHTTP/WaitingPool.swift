import Dispatch

import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Threads of their own for work that may wait (on a lock held by another request, on a store
/// across the network), so that such waits never hold an event-loop thread, and never a thread
/// of the pool that spreads computation over the cores (Dispatch's, which Linux sizes to the
/// cores and does not grow while its threads wait).
///
/// A fixed number of threads take jobs in the order they came; a job waits for a free thread.
/// Threads are started on the first job and live as long as the process.
final class WaitingPool: Sendable {
    private let threads: Int
    private let jobs = NIOLockedValueBox<(queue: [@Sendable () -> Void], head: Int, started: Int)>(([], 0, 0))
    private let ready = DispatchSemaphore(value: 0)

    init(threads: Int) {
        self.threads = max(1, threads)
    }

    /// Runs `job` on one of the pool's threads.
    func run(_ job: @escaping @Sendable () -> Void) {
        let start = jobs.withLockedValue { state -> Bool in
            state.queue.append(job)
            // One more thread while there are fewer than jobs waiting and the limit allows.
            guard state.started < threads, state.queue.count - state.head > 0 else { return false }
            state.started += 1
            return true
        }
        if start { startThread() }
        ready.signal()
    }

    private func next() -> @Sendable () -> Void {
        ready.wait()
        return jobs.withLockedValue { state in
            let job = state.queue[state.head]
            state.head += 1
            // Drop the taken jobs now and then, not on every take.
            if state.head >= 64 && state.head * 2 >= state.queue.count {
                state.queue.removeFirst(state.head)
                state.head = 0
            }
            return job
        }
    }

    private func startThread() {
        let box = Unmanaged.passRetained(
            WorkerBox { [self] in
                while true { next()() }
            }
        ).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        // Handlers read JSON of bounded depth recursively in places: the same stack as the
        // event-loop threads.
        pthread_attr_setstacksize(&attributes, 8 << 20)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let created = pthread_create(
            &thread, &attributes,
            { raw in
                let work = Unmanaged<WorkerBox>.fromOpaque(raw!).takeRetainedValue()
                work.body()
                return nil
            }, box)
        pthread_attr_destroy(&attributes)
        if created != 0 {
            // No thread: the job waits for another thread, as it would for a busy one.
            Unmanaged<WorkerBox>.fromOpaque(box).release()
            jobs.withLockedValue { $0.started -= 1 }
        }
    }
}

private final class WorkerBox {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
