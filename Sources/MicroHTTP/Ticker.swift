import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A thread that calls `body` about once a second until stopped (or `body` returns false).
package final class Ticker: Sendable {
    private let body: @Sendable () -> Bool
    private let wake = CountingSignal()
    private let stopped = NIOLockedValueBox(false)
    private let handle = NIOLockedValueBox<pthread_t?>(nil)

    /// Starts the thread, named `name`.
    package init(name: String, _ body: @escaping @Sendable () -> Bool) {
        self.body = body
        let started = startThread { [self] in
            ThreadPool.nameThread(name)
            while !stopped.withLockedValue({ $0 }) && self.body() { _ = wake.wait(seconds: 1) }
        }
        handle.withLockedValue { $0 = started }
    }

    /// Ends the thread, and waits for it (or, not `waiting`, lets it end by itself).
    package func stop(waiting: Bool = true) {
        stopped.withLockedValue { $0 = true }
        wake.signal()
        guard let thread = handle.withLockedValue({ $0.take() }) else { return }
        if waiting { pthread_join(thread, nil) } else { pthread_detach(thread) }
    }
}
