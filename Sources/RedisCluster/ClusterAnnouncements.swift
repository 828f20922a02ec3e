import Dispatch
import RedisClient
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension RedisClusterPool: RedisCommands {
    /// None: a lease is one node's connection, and a slot that moves while it is held would
    /// answer its pipelines `MOVED`, which only `run` follows.
    package func lease(near key: [UInt8]) -> RedisLease? { nil }

    package var commandTimeout: Duration { configuration.node.commandTimeout }

    package var description: String { configuration.description }

    package func closeIdle() {
        for pool in nodePools { pool.closeIdle() }
    }

    package var isCluster: Bool { true }

    package func slot(of key: [UInt8]) -> Int { HashSlot.of(key) }

    /// `base{tag}`, where the tag is `HashSlot.tags`' for `key`'s slot: one channel a slot, so
    /// that a commit script may `SPUBLISH` on it (a script's channels must share its keys'
    /// slot), and so that the channels spread over the masters exactly as the slots do, with
    /// no node left without its share.
    package func announcementChannel(_ base: String, for key: [UInt8]) -> [UInt8] {
        Self.channel(base, slot: HashSlot.of(key))
    }

    static func channel(_ base: String, slot: Int) -> [UInt8] { Array("\(base){\(HashSlot.tags[slot])}".utf8) }

    package func listen(
        _ base: String, onMessage: @escaping @Sendable ([UInt8]) -> Void, onSubscribed: @escaping @Sendable (_ kept: Bool) -> Void
    ) -> any RedisListening {
        let listener = ShardedListener(pool: self, base: base, onMessage: onMessage, onSubscribed: onSubscribed)
        listener.start()
        return listener
    }
}

/// Every slot's announcement channel, heard on one connection a master (`SSUBSCRIBE`, each
/// master its own slots' channels). A subscription that ends (its master lost, a slot moved
/// away from it, a channel refused with `MOVED`) has the map read again and every master's
/// subscription made again from it; `onSubscribed` is told once all are confirmed, so that
/// the listener catches up on what was announced in between: that the cluster kept its data
/// where every subscription that ended since the last plan ended for a slot that moved.
final class ShardedListener: RedisListening {
    private let pool: RedisClusterPool
    private let base: String
    private let onMessage: @Sendable ([UInt8]) -> Void
    private let onSubscribed: @Sendable (_ kept: Bool) -> Void
    private let stopped = Atomic<Bool>(false)
    /// Signalled by a subscription that ended, and by `stop`.
    private let wake = DispatchSemaphore(value: 0)
    private let thread = Mutex<pthread_t?>(nil)
    /// Times the subscriptions were made (for tests: a move is followed by a new plan).
    let plans = Atomic<Int>(0)

    init(
        pool: RedisClusterPool, base: String, onMessage: @escaping @Sendable ([UInt8]) -> Void,
        onSubscribed: @escaping @Sendable (_ kept: Bool) -> Void
    ) {
        self.pool = pool
        self.base = base
        self.onMessage = onMessage
        self.onSubscribed = onSubscribed
    }

    func start() {
        let handle = startThread { self.run() }
        thread.withLock { $0 = handle }
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
        if let handle = thread.withLock({ $0.take() }) { pthread_join(handle, nil) }
    }

    private func run() {
        var pause = Duration.milliseconds(20)
        // Whether the cluster is known to have kept its data since the last plan confirmed.
        var kept = false
        while !stopped.load(ordering: .relaxed) {
            guard let plan = pool.slotsByMaster() else {
                // The cluster unreachable, or a slot without a master (a failover under way).
                RedisClusterPool.sleep(pause)
                pause = min(pause * 2, .milliseconds(500))
                continue
            }
            let started = ContinuousClock.now
            let round = subscribe(plan, kept: kept)
            while !stopped.load(ordering: .relaxed), !round.ended.load(ordering: .relaxed) {
                _ = wake.wait(timeout: .now() + .seconds(1))
            }
            for subscription in round.all { subscription.stop() }
            // A plan that never confirmed passes on what the one before it knew.
            kept = (round.confirmed.load(ordering: .relaxed) == plan.count || kept) && !round.lost.load(ordering: .relaxed)
            while wake.wait(timeout: .now()) == .success {}
            // A plan that held a while starts the next one's back-off afresh.
            pause = ContinuousClock.now - started > .seconds(1) ? .milliseconds(20) : min(pause * 2, .milliseconds(500))
        }
    }

    /// One plan's subscriptions, and whether one of them has ended.
    private final class Round: Sendable {
        var all: [RedisSubscription] { subscriptions.withLock { $0 } }
        let subscriptions = Mutex<[RedisSubscription]>([])
        let ended = Atomic<Bool>(false)
        /// One ended otherwise than by its slot moving: its master may have failed over.
        let lost = Atomic<Bool>(false)
        let confirmed = Atomic<Int>(0)
    }

    /// A subscription a master, started.
    private func subscribe(_ plan: [ClusterNode: [Int]], kept: Bool) -> Round {
        plans.add(1, ordering: .relaxed)
        let round = Round()
        let masters = plan.count
        let (wake, onSubscribed, onMessage) = (wake, onSubscribed, onMessage)
        let subscriptions = plan.map { node, slots in
            var configuration = pool.configuration.configuration(node)
            // The subscription waits for messages itself; a command timeout would only break it.
            configuration.commandTimeout = .seconds(max(5, configuration.commandTimeout.components.seconds))
            return RedisSubscription(
                configuration, channels: slots.map { RedisClusterPool.channel(base, slot: $0) },
                kind: .sharded(onEnded: { moved in
                    if !moved { round.lost.store(true, ordering: .relaxed) }
                    round.ended.store(true, ordering: .relaxed)
                    wake.signal()
                }), onMessage: onMessage,
                onSubscribed: {
                    if round.confirmed.add(1, ordering: .relaxed).newValue == masters { onSubscribed(kept) }
                })
        }
        round.subscriptions.withLock { $0 = subscriptions }
        for subscription in subscriptions { subscription.start() }
        return round
    }
}
