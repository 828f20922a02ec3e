import Logging
import RedisClient
import Synchronization

/// Sessions' bytes in Redis (see `RedisSessionLayout`), committed by the scripts in
/// `RedisScripts`.
final class RedisSessionStorage: SessionStorage {
    private let redis: RedisPool
    private let layout: RedisSessionLayout
    /// Milliseconds, as Redis takes a TTL.
    private let ttl: String
    private let logger: Logger
    private let events: @Sendable (SessionEvent) -> Void
    /// Whether the last pipeline failed: the log says when Redis goes and comes back, not on
    /// every request in between.
    private let failing = Atomic<Bool>(false)

    init(redis: RedisPool, keyPrefix: String, idleTimeout: Duration, logger: Logger, events: @escaping @Sendable (SessionEvent) -> Void) {
        self.redis = redis
        layout = RedisSessionLayout(prefix: keyPrefix)
        let (seconds, attoseconds) = idleTimeout.components
        ttl = String(max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
        self.logger = logger
        self.events = events
    }

    var isReady: Bool { (try? redis.run(["PING"])) == .status("PONG") }

    func version(of id: String) throws(SessionError) -> (version: UInt64, incarnation: String)? {
        let key = layout.key(id)
        let replies = try run([[Array("HMGET".utf8), key, Array("v".utf8), Array("g".utf8)], [Array("PEXPIRE".utf8), key, Array(ttl.utf8)]])
        guard let fields = replies[0].array, fields.count == 2, let version = fields[0].integer else { return nil }
        return (UInt64(version), fields[1].bytes.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    func read(_ id: String) throws(SessionError) -> StoredSession? {
        let key = layout.key(id)
        let replies = try run([
            [Array("HMGET".utf8), key, Array("v".utf8), Array("o".utf8), Array("d".utf8), Array("g".utf8)],
            [Array("PEXPIRE".utf8), key, Array(ttl.utf8)],
        ])
        guard let fields = replies[0].array, fields.count == 4, let version = fields[0].integer, let options = fields[1].bytes,
            let data = fields[2].bytes
        else { return nil }
        let incarnation = fields[3].bytes.map { String(decoding: $0, as: UTF8.self) } ?? ""
        return StoredSession(version: UInt64(version), incarnation: incarnation, options: options, data: data)
    }

    func options(of id: String) -> [UInt8]? {
        (try? redis.run([[Array("HGET".utf8), layout.key(id), Array("o".utf8)]]))?.first?.bytes
    }

    func commit(_ id: String, _ new: StoredSession, expecting expected: StoredExpectation) throws(SessionError) -> CommitOutcome {
        let next = layout.nextKey(id)
        let (version, incarnation) = switch expected {
        case .absent: ("", "")
        case .any: ("*", "")
        case .version(let number, let incarnation): (String(number), incarnation)
        }
        let replies = try run([
            [
                Array("HSET".utf8), next, Array("v".utf8), Array(String(new.version).utf8), Array("o".utf8), new.options,
                Array("d".utf8), new.data, Array("g".utf8), Array(new.incarnation.utf8),
            ],
            // Should this process die before the swap, the new value does not linger.
            [Array("PEXPIRE".utf8), next, Array("60000".utf8)],
            script(RedisScripts.commit, keys: [layout.key(id), next], arguments: [version, incarnation, ttl]),
        ])
        let parts = replies[2].array ?? []
        let stored = parts.count > 1 ? parts[1].integer.map(UInt64.init) : nil
        return parts.first?.integer == 1 ? .committed(previous: stored) : .conflict(current: stored)
    }

    func delete(_ id: String, expectingVersion version: UInt64?) throws(SessionError) -> DeleteOutcome {
        let reply = try run([script(RedisScripts.delete, keys: [layout.key(id)], arguments: [version.map(String.init) ?? "*"])])[0]
        let parts = reply.array ?? []
        switch parts.first?.integer {
        case 1: return .deleted
        case 0: return .mismatch(current: parts.count > 1 ? parts[1].integer.map(UInt64.init) ?? 0 : 0)
        default: return .absent
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
