import Dispatch

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
/// network), so that such waits never hold an event-loop thread or a core's thread.
///
/// A fixed number of threads take jobs in the order they came; a job waits for a free thread.
/// Threads are started as jobs come and live as long as the process.
final class ThreadPool: Sendable {
    private let name: String
    private let threads: Int
    private let stackSize: Int
    private let jobs = NIOLockedValueBox<(queue: [@Sendable () -> Void], head: Int, started: Int)>(([], 0, 0))
    private let ready = DispatchSemaphore(value: 0)

    /// At most `threads` threads, each with a stack of `stackSize` bytes, named `name` (at
    /// most 15 bytes) in `top`, `perf` and /proc.
    init(name: String, threads: Int, stackSize: Int) {
        self.name = name
        self.threads = max(1, threads)
        self.stackSize = stackSize
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
                Self.nameThread(name)
                while true { next()() }
            }
        ).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, stackSize)
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

extension ThreadPool {
    /// A new thread takes the name of the thread that created it (an event-loop thread, here):
    /// each pool's threads say whose they are instead. Glibc's `pthread_setname_np` is not
    /// visible from Swift; /proc/thread-self/comm is the same name (proc(5)).
    static func nameThread(_ name: String) {
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
