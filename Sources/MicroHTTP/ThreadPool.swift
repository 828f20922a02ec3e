import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Threads of the server's own, each with a stack of a known size (handlers read JSON of
/// bounded depth recursively in places, and Dispatch's threads have whatever stack the
/// platform gives). Two pools run offloaded requests: one sized to the cores for large bodies,
/// and one for work that may wait (on a lock held by another request, on a store across the
/// network), so that such waits never hold an event-loop thread or a core's thread; the live
/// hub's fan-out has one too.
///
/// A fixed number of threads take jobs in the order they came; a job waits for a free thread,
/// in a queue of at most `maxQueued` jobs (a job past it is refused, and its caller answers for
/// it). Threads are started as jobs come, and `stop` ends and joins them all: whoever made the
/// pool stops it, so no thread outlives what it served.
package final class ThreadPool: Sendable {
    private let name: String
    private let threads: Int
    private let stackSize: Int
    private let maxQueued: Int

    private struct State {
        var queue: [@Sendable () -> Void] = []
        var head = 0
        var handles: [pthread_t] = []
        /// Threads being started (counted against the limit before they have a handle).
        var starting = 0
        var stopping = false
    }
    private let state = NIOLockedValueBox(State())
    /// Jobs waiting, and wake-ups for a stop, as a count the threads wait on.
    private let ready = CountingSignal()

    /// At most `threads` threads, each with a stack of `stackSize` bytes, named `name` (at
    /// most 15 bytes) in `top`, `perf` and /proc.
    package init(name: String, threads: Int, stackSize: Int, maxQueued: Int = .max) {
        self.name = name
        self.threads = max(1, threads)
        self.stackSize = stackSize
        self.maxQueued = max(1, maxQueued)
    }

    /// Runs `job` on one of the pool's threads; false (and `job` never runs) where the pool
    /// is stopping or `maxQueued` jobs already wait.
    @discardableResult
    package func run(_ job: @escaping @Sendable () -> Void) -> Bool {
        let (taken, start) = state.withLockedValue { state -> (Bool, Bool) in
            guard !state.stopping, state.queue.count - state.head < maxQueued else { return (false, false) }
            state.queue.append(job)
            // One more thread while there are fewer than the limit.
            guard state.handles.count + state.starting < threads else { return (true, false) }
            state.starting += 1
            return (true, true)
        }
        guard taken else { return false }
        if start { startThread() }
        ready.signal()
        return true
    }

    /// Ends the threads once the jobs queued now are done, and waits for them to end (or, not
    /// `waiting`, lets them end by themselves: for an owner let go of on one of them). A pool
    /// takes no job after.
    package func stop(waiting: Bool = true) {
        let handles = state.withLockedValue { state -> [pthread_t] in
            state.stopping = true
            defer { state.handles.removeAll() }
            return state.handles
        }
        for _ in handles { ready.signal() }
        for handle in handles {
            if waiting { pthread_join(handle, nil) } else { pthread_detach(handle) }
        }
    }

    /// The next job, or nil where the pool is stopping and none is left.
    private func next() -> (@Sendable () -> Void)? {
        ready.wait()
        return state.withLockedValue { state in
            guard state.head < state.queue.count else { return nil }
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
        // Under the lock, so that a stop joins every thread started.
        state.withLockedValue { state in
            state.starting -= 1
            guard !state.stopping else { return }
            let started = MicroHTTP.startThread(stackSize: stackSize) { [self] in
                Self.nameThread(name)
                while let job = next() { job() }
            }
            // No thread: the job waits for another thread, as it would for a busy one.
            if let started { state.handles.append(started) }
        }
    }
}

extension ThreadPool {
    /// A new thread takes the name of the thread that created it (an event-loop thread, here):
    /// each pool's threads say whose they are instead. Glibc's `pthread_setname_np` is not
    /// visible from Swift; /proc/thread-self/comm is the same name (proc(5)).
    package static func nameThread(_ name: String) {
        let file = open("/proc/thread-self/comm", O_WRONLY)
        guard file >= 0 else { return }
        defer { close(file) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
    }
}

private final class WorkerBox {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// Starts a joinable thread running `body` (with a stack of `stackSize` bytes where given);
/// nil where none could be started. Whoever starts it joins it (or detaches it).
package func startThread(stackSize: Int? = nil, _ body: @escaping () -> Void) -> pthread_t? {
    let box = Unmanaged.passRetained(WorkerBox(body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
    var thread = pthread_t()
    let created = pthread_create(
        &thread, &attributes,
        { raw in
            Unmanaged<WorkerBox>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, box)
    guard created == 0 else {
        Unmanaged<WorkerBox>.fromOpaque(box).release()
        return nil
    }
    return thread
}
