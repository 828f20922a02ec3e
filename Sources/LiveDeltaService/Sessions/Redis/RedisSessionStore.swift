import LiveCollections
import Logging
import RedisClient
import Synchronization
import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Sessions kept in Redis, so that they outlive a process and replicas share them.
///
/// Each change follows the memory store's rules (`SessionRules`) on a parsed copy of the
/// session at its stored version, then commits with a compare-and-set on that version. A
/// replica whose commit loses re-reads and tries again when the request named no version, and
/// answers 412 when it did: every committed delta is computed against exactly the version it
/// replaces. Copies of recently used sessions are kept, so a change first reads only the stored
/// version, and the whole session only when another replica has moved it on.
public final class RedisSessionStore: SessionStore {
    public struct Limits: Sendable {
        /// A session unused this long expires (the key's TTL, refreshed on each use).
        public var idleTimeout: Duration = .seconds(15 * 60)
        public var maxItemsPerSession = 100_000
        /// Parsed sessions kept in this process.
        public var cachedSessions = 256
        /// Commits that lose to another replica are tried again, after a random wait, up to this
        /// many times in all.
        public var attempts = 12

        public init() {}
    }

    public let limits: Limits
    private let redis: RedisPool
    private let layout: RedisSessionLayout
    private let logger: Logger
    private let events: @Sendable (SessionEvent) -> Void
    /// A parsed copy, and the incarnation it belongs to.
    private struct Entry: Sendable {
        let session: HeldSession
        let incarnation: String
    }
    private struct Cache: Sendable {
        var sessions: [String: Entry] = [:]
        var recency = RecencyList<String>()
    }
    private let cache = NIOLockedValueBox(Cache())
    /// Whether the last pipeline failed: the log says when Redis goes and comes back, not on
    /// every request in between.
    private let failing = Atomic<Bool>(false)

    public init(
        redis: RedisPool, keyPrefix: String = "livedelta:", limits: Limits = Limits(), logger: Logger = Logger(label: "livedelta.sessions"),
        events: @escaping @Sendable (SessionEvent) -> Void = { _ in }
    ) {
        self.redis = redis
        layout = RedisSessionLayout(prefix: keyPrefix)
        self.limits = limits
        self.logger = logger
        self.events = events
    }

    public var statistics: SessionStatistics {
        SessionStatistics(open: cache.withLockedValue { $0.sessions.count }, evicted: 0, expired: 0)
    }

    public var isReady: Bool { (try? redis.run(["PING"])) == .status("PONG") }

    // MARK: - SessionStore

    public func put(id: String, options: DiffOptions, collection: JSONCollection) throws(SessionError) -> (SessionSnapshot, created: Bool) {
        try SessionRules.checkSize(collection.itemCount, limit: limits.maxItemsPerSession)
        let session = HeldSession(id: id, options: options, holder: try SessionRules.holder(for: collection, options: options), now: 0)
        let incarnation = RedisSessionLayout.newIncarnation()
        guard case .committed(let previous) = try commit(session, incarnation: incarnation, expecting: "*", incarnationExpected: "") else {
            throw .conflict
        }
        remember(session, incarnation)
        return (SessionSnapshot(id: id, options: options, version: 0, collection: collection), previous == nil)
    }

    public func snapshot(id: String) throws(SessionError) -> SessionSnapshot {
        guard let snapshot = try withCurrent(id, { session, _ throws(SessionError) in SessionRules.snapshot(of: session) }) else {
            throw .notFound(id: id)
        }
        return snapshot
    }

    public func options(id: String) -> DiffOptions? {
        if let cached = cache.withLockedValue({ $0.sessions[id] }) { return cached.session.options }
        guard let bytes = (try? redis.run([[Array("HGET".utf8), layout.key(id), Array("o".utf8)]]))?.first?.bytes,
            let value = try? parseOptions(bytes)
        else { return nil }
        return try? DiffOptions(value, at: JSONPointer("options"))
    }

    public func update(
        id: String, to collection: JSONCollection, readWith: DiffOptions, condition: VersionCondition, commit: Bool
    ) throws(SessionError) -> SessionChange {
        try SessionRules.checkSize(collection.itemCount, limit: limits.maxItemsPerSession)
        // What an update commits is the request's collection: its text is made before the
        // session's lock is taken, not while others wait for it.
        let encoded = commit ? RedisSessionLayout.encode(collection) : nil
        return try change(
            id: id, condition: condition, creating: commit && condition == .any ? (collection, readWith) : nil, readWith: readWith,
            encoded: encoded
        ) { session, created throws(SessionError) in
            try SessionRules.update(session, to: collection, condition: condition, commit: commit, created: created)
        } committing: { commit }
    }

    public func append(id: String, _ collection: JSONCollection, readWith: DiffOptions, condition: VersionCondition) throws(SessionError) -> SessionChange {
        try change(id: id, condition: condition, creating: nil, readWith: readWith, encoded: nil) { session, _ throws(SessionError) in
            try SessionRules.append(session, collection, condition: condition, maxItems: limits.maxItemsPerSession)
        } committing: { true }
    }

    public func delete(id: String, condition: VersionCondition) throws(SessionError) {
        let expected: String
        switch condition {
        case .version(let version): expected = String(version)
        case .any, .exists: expected = "*"
        }
        let reply = try run([script(RedisScripts.delete, keys: [layout.key(id)], arguments: [expected])])[0]
        forget(id)
        let parts = reply.array ?? []
        switch parts.first?.integer {
        case 1: return
        case 0: throw .versionMismatch(expected: condition, current: parts.count > 1 ? parts[1].integer.map(UInt64.init) : nil)
        default:
            if condition == .any { throw .notFound(id: id) }
            throw .versionMismatch(expected: condition, current: nil)
        }
    }

    // MARK: - One change

    /// Runs `rules` on the session as stored now (or on a new, empty one, where `creating` says
    /// so) under its step lock, and commits the result with a compare-and-set on the version it
    /// started from; where another replica committed first, reads again and repeats, unless the
    /// request named a version.
    private func change(
        id: String, condition: VersionCondition, creating: (collection: JSONCollection, options: DiffOptions)?, readWith: DiffOptions,
        encoded: [UInt8]?, _ rules: (HeldSession, Bool) throws(SessionError) -> SessionChange, committing: () -> Bool
    ) throws(SessionError) -> SessionChange {
        /// One try: the change, or nil where another replica committed first.
        func attempt(_ session: HeldSession, incarnation: String?) throws(SessionError) -> SessionChange? {
            guard session.options.readsLike(readWith) else { throw .optionsChanged(session.options) }
            let base = session.holder.version
            let change = try rules(session, incarnation == nil)
            guard committing() else { return change }
            let stored = incarnation ?? RedisSessionLayout.newIncarnation()
            let expected = incarnation == nil ? "" : String(base)
            switch try commit(session, incarnation: stored, expecting: expected, incarnationExpected: incarnation ?? "", data: encoded) {
            case .committed:
                remember(session, stored)
                return change
            case .conflict(let current):
                // The copy has moved on past what Redis holds: it must not be used again.
                events(.conflict)
                session.stale.store(true, ordering: .releasing)
                forget(id)
                if case .version = condition { throw .versionMismatch(expected: condition, current: current) }
                return nil
            }
        }
        for round in 0..<max(1, limits.attempts) {
            if round > 0 { Self.backOff(round) }
            // Only a first try trusts the copy without asking: a lost commit has forgotten it.
            if let found = try withCurrent(id, optimistic: committing() && round == 0, { session, incarnation throws(SessionError) in
                try attempt(session, incarnation: incarnation)
            }) {
                guard let change = found else { continue }
                return change
            }
            guard let creating else {
                if condition == .any { throw .notFound(id: id) }
                throw .versionMismatch(expected: condition, current: nil)
            }
            let empty: JSONCollection = if case .sectioned = creating.collection { .sectioned([]) } else { .flat([]) }
            let fresh = HeldSession(id: id, options: creating.options, holder: try SessionRules.holder(for: empty, options: creating.options), now: 0)
            fresh.step.lock()
            defer { fresh.step.unlock() }
            if let change = try attempt(fresh, incarnation: nil) { return change }
        }
        throw .conflict
    }

    /// After losing a commit: waits a random time that grows with each loss (up to 1, 2, 4 …
    /// 32 ms), so that replicas racing for one session stop colliding.
    private static func backOff(_ round: Int) {
        let ceiling = UInt32(1_000) << UInt32(min(round - 1, 5))
        usleep(UInt32.random(in: 0...ceiling))
    }

    enum CommitOutcome {
        /// Committed; the version it replaced (nil where the session was new).
        case committed(previous: UInt64?)
        /// Another version was there (nil: none).
        case conflict(current: UInt64?)
    }

    /// Writes the session's state beside its key, then swaps it in where the stored session is
    /// still `expected` ("" for none, "*" for any, else that version of `incarnationExpected`).
    private func commit(
        _ session: HeldSession, incarnation: String, expecting expected: String, incarnationExpected: String, data encoded: [UInt8]? = nil
    ) throws(SessionError) -> CommitOutcome {
        let options = RedisSessionLayout.encode(session.options)
        let data = encoded ?? RedisSessionLayout.encode(session.holder.collection)
        let next = layout.nextKey(session.id)
        let replies = try run([
            [
                Array("HSET".utf8), next, Array("v".utf8), Array(String(session.holder.version).utf8), Array("o".utf8), options,
                Array("d".utf8), data, Array("g".utf8), Array(incarnation.utf8),
            ],
            // Should this process die before the swap, the new value does not linger.
            [Array("PEXPIRE".utf8), next, Array("60000".utf8)],
            script(RedisScripts.commit, keys: [layout.key(session.id), next], arguments: [expected, incarnationExpected, ttl]),
        ])
        let parts = replies[2].array ?? []
        let version = parts.count > 1 ? parts[1].integer.map(UInt64.init) : nil
        return parts.first?.integer == 1 ? .committed(previous: version) : .conflict(current: version)
    }

    /// Runs `body` on the session as stored now, holding its step lock: the cached copy where
    /// it is still at the stored version (checked under the lock, so a change this process is
    /// committing is never mistaken for another replica's), else the session read and parsed
    /// again. Nil, without running `body`, where there is no such session. Each read refreshes
    /// the session's idle timeout.
    ///
    /// A change that commits may skip the version check (`optimistic`): its compare-and-set
    /// fails where the copy is out of date, and it then reads again. That saves a round trip
    /// on every change to a session this replica keeps.
    private func withCurrent<T>(
        _ id: String, optimistic: Bool = false, _ body: (HeldSession, String) throws(SessionError) -> T
    ) throws(SessionError) -> T? {
        let key = layout.key(id)
        let cached = cache.withLockedValue { cache -> Entry? in
            guard let entry = cache.sessions[id] else { return nil }
            cache.recency.touch(id)
            return entry
        }
        if let cached {
            cached.session.step.lock()
            defer { cached.session.step.unlock() }
            if !cached.session.stale.load(ordering: .acquiring) {
                if optimistic {
                    events(.cacheHit)
                    return try body(cached.session, cached.incarnation)
                }
                let replies = try run([
                    [Array("HMGET".utf8), key, Array("v".utf8), Array("g".utf8)], [Array("PEXPIRE".utf8), key, Array(ttl.utf8)],
                ])
                guard let fields = replies[0].array, fields.count == 2, let version = fields[0].integer.map(UInt64.init) else {
                    forget(id)
                    return nil
                }
                if version == cached.session.holder.version && fields[1].bytes == Array(cached.incarnation.utf8) {
                    events(.cacheHit)
                    return try body(cached.session, cached.incarnation)
                }
            }
        }
        events(.cacheMiss)
        let replies = try run([
            [Array("HMGET".utf8), key, Array("v".utf8), Array("o".utf8), Array("d".utf8), Array("g".utf8)],
            [Array("PEXPIRE".utf8), key, Array(ttl.utf8)],
        ])
        guard let fields = replies[0].array, fields.count == 4, let version = fields[0].integer, let options = fields[1].bytes,
            let data = fields[2].bytes
        else {
            forget(id)
            return nil
        }
        let incarnation = fields[3].bytes.map { String(decoding: $0, as: UTF8.self) } ?? ""
        let session = try RedisSessionLayout.decode(id: id, version: UInt64(version), options: options, data: data, now: 0)
        remember(session, incarnation)
        session.step.lock()
        defer { session.step.unlock() }
        return try body(session, incarnation)
    }

    // MARK: - Pieces

    private var ttl: String { String(max(1, limits.idleTimeout.components.seconds * 1_000 + limits.idleTimeout.components.attoseconds / 1_000_000_000_000_000)) }

    private func remember(_ session: HeldSession, _ incarnation: String) {
        cache.withLockedValue { cache in
            cache.sessions[session.id] = Entry(session: session, incarnation: incarnation)
            cache.recency.touch(session.id)
            while cache.sessions.count > max(1, limits.cachedSessions), let oldest = cache.recency.oldest {
                cache.sessions[oldest] = nil
                cache.recency.remove(oldest)
            }
        }
    }

    private func forget(_ id: String) {
        cache.withLockedValue { cache in
            cache.sessions[id] = nil
            cache.recency.remove(id)
        }
    }

    /// A script call. EVAL with the text: Redis keeps each script compiled by its hash, so
    /// this costs it no more than EVALSHA would, and a restarted Redis needs nothing loaded.
    private func script(_ source: String, keys: [[UInt8]], arguments: [String]) -> [[UInt8]] {
        [Array("EVAL".utf8), Array(source.utf8), Array(String(keys.count).utf8)] + keys + arguments.map { Array($0.utf8) }
    }

    /// Runs a pipeline. Redis's failures, and its error replies, are `storeUnavailable`.
    private func run(_ commands: [[[UInt8]]]) throws(SessionError) -> [RedisValue] {
        let started = ContinuousClock.now
        defer { events(.storeCommand(ContinuousClock.now - started)) }
        do throws(RedisError) {
            let replies = try redis.run(commands)
            if let message = replies.lazy.compactMap({ if case .error(let message) = $0 { message } else { nil } }).first {
                throw RedisError.reply(message)
            }
            if failing.exchange(false, ordering: .relaxed) {
                logger.notice("session store reachable again", metadata: ["redis": "\(redis.configuration.description)"])
            }
            return replies
        } catch {
            events(.storeError)
            if !failing.exchange(true, ordering: .relaxed) {
                logger.warning("session store unavailable", metadata: ["error": "\(error)", "redis": "\(redis.configuration.description)"])
            }
            throw .storeUnavailable(error.description)
        }
    }
}
