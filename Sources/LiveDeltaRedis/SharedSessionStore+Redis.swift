import LiveDeltaService
import Logging
import RedisClient

extension SharedSessionStore {
    /// Sessions in Redis, under keys that start with `keyPrefix`. Warns where Redis's own
    /// eviction policy may drop sessions (`warnOfEviction`).
    package static func redis(
        _ pool: any RedisCommands, keyPrefix: String = "livedelta:", limits: Limits = Limits(), logger: Logger = Logger(label: "livedelta.sessions"),
        events: @escaping @Sendable (SessionEvent) -> Void = { _ in }
    ) -> SharedSessionStore {
        let storage = RedisSharedStorage(
            redis: pool, keyPrefix: keyPrefix, idleTimeout: limits.idleTimeout,
            tenantQuotas: (limits.maxSessionsPerTenant, limits.maxBytesPerTenant), logger: logger, events: events)
        warnOfEviction(pool, logger: logger)
        warnOfMode(pool, logger: logger)
        return SharedSessionStore(storage: storage, limits: limits, events: events)
    }

    /// Logs a warning where the store URL's kind is not the Redis's: a cluster node named by
    /// `redis://` answers `MOVED` for most keys (503s), and a Redis without cluster support
    /// named by `redis-cluster://` has no slot map to give. A Redis that cannot be asked is
    /// not warned of.
    static func warnOfMode(_ pool: any RedisCommands, logger: Logger) {
        let clustered: Bool
        do {
            guard let info = try pool.run(["INFO", "cluster"]).bytes else { return }
            clustered = String(decoding: info, as: UTF8.self).contains("cluster_enabled:1")
        } catch {
            // A cluster pool asks for the slot map first, which such a Redis refuses.
            guard pool.isCluster, "\(error)".contains("cluster support disabled") else { return }
            clustered = false
        }
        guard clustered != pool.isCluster else { return }
        logger.warning(
            clustered
                ? "this Redis is a node of a Redis Cluster: name it with redis-cluster://host:port[,host:port...] in --session-store, or most sessions will answer 503"
                : "this Redis is not a cluster: name it with redis://host:port in --session-store",
            metadata: ["redis": "\(pool.description)"])
    }

    /// Logs a warning where Redis has a memory limit and a policy that evicts keys with a TTL
    /// (every session has one): when it fills, Redis drops the sessions it picks, of any tenant,
    /// whatever the tenants' quotas. `noeviction` makes a full Redis refuse writes instead
    /// (503). A Redis that cannot be asked (down, or `CONFIG` renamed away) is not warned of.
    static func warnOfEviction(_ pool: any RedisCommands, logger: Logger) {
        guard let replies = try? pool.run([["CONFIG", "GET", "maxmemory-policy"], ["CONFIG", "GET", "maxmemory"]]),
            let policy = replies[0].array?.last?.bytes.map({ String(decoding: $0, as: UTF8.self) }),
            let limit = replies[1].array?.last?.bytes.flatMap({ Int(String(decoding: $0, as: UTF8.self)) })
        else { return }
        guard policy != "noeviction", limit > 0 else { return }
        logger.warning(
            "Redis may evict sessions of any tenant when it fills, whatever the tenant quotas: set maxmemory-policy noeviction so that a full Redis refuses writes (503) instead",
            metadata: ["maxmemory_policy": "\(policy)", "maxmemory": "\(limit)"])
    }
}
