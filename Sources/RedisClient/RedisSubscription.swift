import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One connection subscribed to channels of one Redis, on a thread of its own, until `stop`:
/// each message's payload is handed to `onMessage`, in order, and `onSubscribed` is told each
/// time the subscription (re)starts, so that whoever listens can catch up on what was
/// published meanwhile, which Redis does not keep.
///
/// `plain` (`SUBSCRIBE`) opens a lost connection again, every half second while Redis is away.
/// `sharded` (`SSUBSCRIBE`, one shard's channels) ends instead, and says so, on anything that
/// may mean the channels are no longer that node's: a lost connection, a refusal (`MOVED`, the
/// node does not serve a channel's slot), an unsolicited `sunsubscribe` (Redis 7 tells a slot's
/// subscribers so when the slot leaves the node): whoever chose the node chooses again. It
/// says `moved` for the last two, where the node is alive and its data whole.
package final class RedisSubscription: Sendable {
    package enum Kind: Sendable {
        case plain
        case sharded(onEnded: @Sendable (_ moved: Bool) -> Void)
    }

    private let configuration: RedisConfiguration
    private let channels: [[UInt8]]
    private let kind: Kind
    private let onMessage: @Sendable ([UInt8]) -> Void
    private let onSubscribed: @Sendable () -> Void
    private let stopped = Atomic<Bool>(false)
    private let thread = Mutex<pthread_t?>(nil)

    package init(
        _ configuration: RedisConfiguration, channels: [[UInt8]], kind: Kind = .plain, onMessage: @escaping @Sendable ([UInt8]) -> Void,
        onSubscribed: @escaping @Sendable () -> Void
    ) {
        self.configuration = configuration
        self.channels = channels
        self.kind = kind
        self.onMessage = onMessage
        self.onSubscribed = onSubscribed
    }

    package convenience init(
        _ configuration: RedisConfiguration, channel: String, onMessage: @escaping @Sendable ([UInt8]) -> Void,
        onSubscribed: @escaping @Sendable () -> Void
    ) {
        self.init(configuration, channels: [Array(channel.utf8)], onMessage: onMessage, onSubscribed: onSubscribed)
    }

    /// Starts the thread.
    package func start() {
        let handle = startThread { self.run() }
        thread.withLock { $0 = handle }
    }

    /// Ends the thread, within the longest it waits for a message (a second; a tenth of one
    /// sharded, as a shard's subscriptions are stopped to be made again), and waits for it.
    package func stop() {
        stopped.store(true, ordering: .relaxed)
        if let handle = thread.withLock({ $0.take() }) { pthread_join(handle, nil) }
    }

    private var sharded: Bool {
        if case .sharded = kind { true } else { false }
    }

    private func run() {
        let (verb, message, unsubscribed) = sharded ? ("SSUBSCRIBE", "smessage", "sunsubscribe") : ("SUBSCRIBE", "message", "unsubscribe")
        while !stopped.load(ordering: .relaxed) {
            do throws(RedisError) {
                let connection = try RedisConnection(configuration)
                // One channel a command: a sharded one takes channels of one slot only.
                try connection.write(channels.map { [.text(verb), .bytes($0)] })
                for reply in try connection.read(channels.count) {
                    if case .error(let refusal) = reply { throw .reply(refusal) }
                    guard case .array = reply else { throw .reply("\(verb) was not confirmed") }
                }
                onSubscribed()
                while !stopped.load(ordering: .relaxed) {
                    guard let push = try connection.nextPush(waiting: sharded ? 100 : 1_000) else { continue }
                    // [kind, channel, payload or count]
                    guard let parts = push.array, parts.count == 3, let pushed = parts[0].bytes else { continue }
                    if pushed == Array(message.utf8), let payload = parts[2].bytes {
                        onMessage(payload)
                    } else if pushed == Array(unsubscribed.utf8) {
                        throw .reply("MOVED: Redis ended the subscription (the channel's slot moved)")
                    }
                }
            } catch {
                if case .sharded(let onEnded) = kind {
                    let moved = if case .reply(let message) = error { message.hasPrefix("MOVED") } else { false }
                    if !stopped.load(ordering: .relaxed) { onEnded(moved) }
                    return
                }
                // Redis away: tried again in half a second, unless stopped meanwhile.
                for _ in 0..<5 where !stopped.load(ordering: .relaxed) { usleep(100_000) }
            }
        }
    }
}

/// Runs `body` on a thread of its own (a joinable pthread, not Dispatch's pool, as it blocks
/// for as long as it listens); its handle, nil where none could be made.
package func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
    final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
    let box = Unmanaged.passRetained(Body(body)).toOpaque()
    var handle = pthread_t()
    let created = pthread_create(
        &handle, nil,
        { raw in
            Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, box)
    guard created == 0 else {
        Unmanaged<Body>.fromOpaque(box).release()
        return nil
    }
    return handle
}
