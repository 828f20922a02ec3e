import LiveDeltaService
import Logging
import RedisClient

extension SharedSessionStore {
    /// Sessions in Redis, under keys that start with `keyPrefix`.
    package static func redis(
        _ pool: RedisPool, keyPrefix: String = "livedelta:", limits: Limits = Limits(), logger: Logger = Logger(label: "livedelta.sessions"),
        events: @escaping @Sendable (SessionEvent) -> Void = { _ in }
    ) -> SharedSessionStore {
        let storage = RedisSharedStorage(redis: pool, keyPrefix: keyPrefix, idleTimeout: limits.idleTimeout, logger: logger, events: events)
        return SharedSessionStore(storage: storage, limits: limits, events: events)
    }
}
