/// What the session store needs of Redis, whether it is one server (`RedisPool`) or a cluster
/// (which sends each command to the master of its key's slot): pipelines, a connection of
/// one's own near a key, and announcements, which on a cluster go on sharded channels so that
/// each is carried by one shard instead of being copied to every node.
package protocol RedisCommands: Sendable {
    /// Runs the commands as one pipeline (a cluster: one a master) and returns their replies in
    /// order.
    func run(_ commands: [[RedisArgument]]) throws(RedisError) -> [RedisValue]

    /// A connection of its own for pipelines about keys in `key`'s slot, where one is free now;
    /// nil where none is (the caller then runs its pipelines one by one).
    func lease(near key: [UInt8]) -> RedisLease?

    /// How long a command may take.
    var commandTimeout: Duration { get }

    /// Where Redis is, without its password, for logs.
    var description: String { get }

    /// Closes the idle connections, which a lost subscription says are likely broken too.
    func closeIdle()

    /// Keys for which this answers the same may go together in one multi-key command (a
    /// cluster's slot; 0 for every key on one Redis).
    func slot(of key: [UInt8]) -> Int

    /// Whether this is a cluster: the keys of one script must then share a slot, and
    /// announcements go on sharded channels (`SPUBLISH`, one a slot) rather than on one
    /// channel (`PUBLISH`).
    var isCluster: Bool { get }

    /// The channel on which a change to `key` is announced: `base` itself on one Redis, `base`
    /// with a hash tag of `key`'s slot on a cluster, as a script that writes `key` may only
    /// publish on a channel of its own slot.
    func announcementChannel(_ base: String, for key: [UInt8]) -> [UInt8]

    /// Hears every channel `announcementChannel` names under `base`, on threads of its own,
    /// until `stop`: each message to `onMessage`, in order for one channel; `onSubscribed` each
    /// time hearing (re)starts, so that the listener catches up on what it may have missed:
    /// with `true` where Redis is known to have kept all it held meanwhile (a cluster's slot
    /// moved: only announcements were missed), `false` where it may not have (the first time,
    /// a lost connection: a restart or a failover may have lost the latest writes).
    func listen(
        _ base: String, onMessage: @escaping @Sendable ([UInt8]) -> Void, onSubscribed: @escaping @Sendable (_ kept: Bool) -> Void
    ) -> any RedisListening
}

/// A subscription `RedisCommands.listen` started.
package protocol RedisListening: Sendable {
    /// Ends it and waits for its threads.
    func stop()
}

extension RedisCommands {
    /// One command.
    package func run(_ command: [String]) throws(RedisError) -> RedisValue {
        try run([command.map(RedisArgument.text)])[0]
    }
}

extension RedisPool: RedisCommands {
    package func lease(near key: [UInt8]) -> RedisLease? { lease() }

    package var commandTimeout: Duration { configuration.commandTimeout }

    package var description: String { configuration.description }

    package var isCluster: Bool { false }

    package func slot(of key: [UInt8]) -> Int { 0 }

    package func announcementChannel(_ base: String, for key: [UInt8]) -> [UInt8] { Array(base.utf8) }

    package func listen(
        _ base: String, onMessage: @escaping @Sendable ([UInt8]) -> Void, onSubscribed: @escaping @Sendable (_ kept: Bool) -> Void
    ) -> any RedisListening {
        var configuration = configuration
        // The subscription waits for messages itself; a command timeout would only break it.
        configuration.commandTimeout = .seconds(max(5, configuration.commandTimeout.components.seconds))
        let subscription = RedisSubscription(configuration, channel: base, onMessage: onMessage, onSubscribed: { onSubscribed(false) })
        subscription.start()
        return subscription
    }
}

extension RedisSubscription: RedisListening {}
