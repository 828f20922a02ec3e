import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One connection subscribed to one Redis channel, on a thread of its own, until `stop`: each
/// message's payload is handed to `onMessage`, in order. A lost connection
/// is opened again (every half second while Redis is away), and `onSubscribed` is told each
/// time the subscription (re)starts, so that whoever listens can catch up on what was
/// published meanwhile, which Redis does not keep.
package final class RedisSubscription: Sendable {
    private let configuration: RedisConfiguration
    private let channel: String
    private let onMessage: @Sendable ([UInt8]) -> Void
    private let onSubscribed: @Sendable () -> Void
    private let stopped = Atomic<Bool>(false)
    private let thread = Mutex<pthread_t?>(nil)

    package init(
        _ configuration: RedisConfiguration, channel: String, onMessage: @escaping @Sendable ([UInt8]) -> Void,
        onSubscribed: @escaping @Sendable () -> Void
    ) {
        self.configuration = configuration
        self.channel = channel
        self.onMessage = onMessage
        self.onSubscribed = onSubscribed
    }

    /// Starts the thread.
    package func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        let created = pthread_create(
            &handle, nil,
            { raw in
                let subscription = Unmanaged<RedisSubscription>.fromOpaque(raw!).takeRetainedValue()
                subscription.run()
                return nil
            }, box)
        if created == 0 { thread.withLock { $0 = handle } } else { Unmanaged<RedisSubscription>.fromOpaque(box).release() }
    }

    /// Ends the thread, within a second (the longest it waits for a message), and waits for it.
    package func stop() {
        stopped.store(true, ordering: .relaxed)
        if let handle = thread.withLock({ $0.take() }) { pthread_join(handle, nil) }
    }

    private func run() {
        while !stopped.load(ordering: .relaxed) {
            do throws(RedisError) {
                let connection = try RedisConnection(configuration)
                let confirmed = try connection.run([["SUBSCRIBE", .text(channel)]])
                guard case .array = confirmed.first else { throw .reply("SUBSCRIBE was not confirmed") }
                onSubscribed()
                while !stopped.load(ordering: .relaxed) {
                    guard let push = try connection.nextPush(waiting: 1_000) else { continue }
                    // ["message", channel, payload]
                    if let parts = push.array, parts.count == 3, parts[0].bytes == Array("message".utf8), let payload = parts[2].bytes {
                        onMessage(payload)
                    }
                }
            } catch {
                // Redis away: tried again in half a second, unless stopped meanwhile.
                for _ in 0..<5 where !stopped.load(ordering: .relaxed) { usleep(100_000) }
            }
        }
    }
}
