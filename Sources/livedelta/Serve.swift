import ArgumentParser
import LiveDeltaRedis
import LiveDeltaService
import Logging
import MicroHTTP
import Prometheus
import RedisClient

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension LineLogHandler.Format: ExpressibleByArgument {}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the HTTP service (the default).")

    @Option(help: "Address to listen on: numeric IPv4 or IPv6, or localhost. [env: LIVEDELTA_HOST]")
    var host: String = Environment.value("LIVEDELTA_HOST", default: "0.0.0.0")

    @Option(help: "Port to listen on; 0 picks a free one. [env: LIVEDELTA_PORT]")
    var port: UInt16 = Environment.value("LIVEDELTA_PORT", default: 8080)

    @Option(help: "Worker threads, each with its own epoll loop. [env: LIVEDELTA_THREADS]")
    var threads: Int = Environment.value("LIVEDELTA_THREADS", default: HTTPServer.processorCount)

    @Option(help: "Largest request body in bytes (413 above). [env: LIVEDELTA_MAX_BODY_SIZE]")
    var maxBodySize: Int = Environment.value("LIVEDELTA_MAX_BODY_SIZE", default: 32 << 20)

    @Option(help: "Bytes of request bodies held at once, by all connections together (503 above). [env: LIVEDELTA_MAX_BUFFERED_BODY_BYTES]")
    var maxBufferedBodyBytes: Int = Environment.value("LIVEDELTA_MAX_BUFFERED_BODY_BYTES", default: 1 << 30)

    @Option(help: "Deepest JSON nesting accepted, up to 1000 (400 above). [env: LIVEDELTA_MAX_DEPTH]")
    var maxDepth: Int = Environment.value("LIVEDELTA_MAX_DEPTH", default: 512)

    @Option(help: "Most items in one request body, all its collections together (413 above). [env: LIVEDELTA_MAX_ITEMS_PER_REQUEST]")
    var maxItemsPerRequest: Int = Environment.value("LIVEDELTA_MAX_ITEMS_PER_REQUEST", default: 2_000_000)

    @Option(help: "Most items read from bodies and not yet answered, all requests together (503 above). [env: LIVEDELTA_MAX_ITEMS_IN_FLIGHT]")
    var maxItemsInFlight: Int = Environment.value("LIVEDELTA_MAX_ITEMS_IN_FLIGHT", default: 8_000_000)

    @Option(help: "Seconds before an idle connection is closed. [env: LIVEDELTA_CONNECTION_TIMEOUT]")
    var connectionTimeout: Int = Environment.value("LIVEDELTA_CONNECTION_TIMEOUT", default: 30)

    @Option(help: "Most connections open at once; one more is answered 503 and closed. [env: LIVEDELTA_MAX_CONNECTIONS]")
    var maxConnections: Int = Environment.value("LIVEDELTA_MAX_CONNECTIONS", default: 1_000)

    @Option(
        help:
            "Most connections open at once from one client address, its event streams and long polls included (429 above); behind a proxy, set it to --max-connections plus --max-subscribers. [env: LIVEDELTA_MAX_CONNECTIONS_PER_CLIENT]"
    )
    var maxConnectionsPerClient: Int = Environment.value("LIVEDELTA_MAX_CONNECTIONS_PER_CLIENT", default: 256)

    @Option(
        help:
            "Seconds a client has to send a request's line and headers, from connecting or from the previous response (408 after). [env: LIVEDELTA_HEADER_TIMEOUT]"
    )
    var headerTimeout: Int = Environment.value("LIVEDELTA_HEADER_TIMEOUT", default: 10)

    @Option(
        help:
            "Bytes a second a request body must arrive at, on average, once it has taken longer than --header-timeout (408 below). [env: LIVEDELTA_MIN_BODY_RATE]"
    )
    var minBodyRate: Int = Environment.value("LIVEDELTA_MIN_BODY_RATE", default: 4_096)

    @Option(help: "Seconds that requests in flight get to finish after SIGTERM or SIGINT. [env: LIVEDELTA_SHUTDOWN_GRACE]")
    var shutdownGrace: Int = Environment.value("LIVEDELTA_SHUTDOWN_GRACE", default: 10)

    @Option(
        help:
            "Where sessions live: memory (this process), or redis://[:password@]host[:port][/db] (shared by replicas, kept across restarts). [env: LIVEDELTA_SESSION_STORE]"
    )
    var sessionStore: String = Environment.value("LIVEDELTA_SESSION_STORE", default: "memory")

    @Option(help: "Prefix of the Redis keys sessions are kept under. [env: LIVEDELTA_SESSION_KEY_PREFIX]")
    var sessionKeyPrefix: String = Environment.value("LIVEDELTA_SESSION_KEY_PREFIX", default: "livedelta:")

    @Option(help: "Milliseconds to wait for Redis to connect, and for each command's answer. [env: LIVEDELTA_REDIS_TIMEOUT]")
    var redisTimeout: Int = Environment.value("LIVEDELTA_REDIS_TIMEOUT", default: 1_000)

    @Option(help: "Connections to Redis open at once, at most. [env: LIVEDELTA_REDIS_CONNECTIONS]")
    var redisConnections: Int = Environment.value("LIVEDELTA_REDIS_CONNECTIONS", default: 16)

    @Option(help: "Most sessions held at once; when full, the least recently used idle one is evicted. [env: LIVEDELTA_MAX_SESSIONS]")
    var maxSessions: Int = Environment.value("LIVEDELTA_MAX_SESSIONS", default: 10_000)

    @Option(
        help:
            "Most sessions one tenant (the namespace a token names) may hold; past it the tenant's own least recently used idle session is evicted, never another tenant's (429 where none is idle). [env: LIVEDELTA_MAX_SESSIONS_PER_TENANT]"
    )
    var maxSessionsPerTenant: Int = Environment.value("LIVEDELTA_MAX_SESSIONS_PER_TENANT", default: 1_000)

    @Option(
        help:
            "Bytes one tenant's sessions may take, as --max-session-bytes counts them; evicts within the tenant only (429 where nothing is idle). [env: LIVEDELTA_MAX_SESSION_BYTES_PER_TENANT]"
    )
    var maxSessionBytesPerTenant: Int = Environment.value("LIVEDELTA_MAX_SESSION_BYTES_PER_TENANT", default: 256 << 20)

    @Option(help: "Seconds a session may stay unused before it expires. [env: LIVEDELTA_SESSION_IDLE_TIMEOUT]")
    var sessionIdleTimeout: Int = Environment.value("LIVEDELTA_SESSION_IDLE_TIMEOUT", default: 900)

    @Option(help: "Most items one session may hold (413 above). [env: LIVEDELTA_MAX_SESSION_ITEMS]")
    var maxSessionItems: Int = Environment.value("LIVEDELTA_MAX_SESSION_ITEMS", default: 100_000)

    @Option(
        help:
            "Bytes sessions take in this process: their bodies as sent, plus \(SessionFootprint.bytesPerItem) per item and \(SessionFootprint.bytesPerBody) per body. The memory store evicts the least recently used idle sessions to stay within it; the Redis store drops parsed copies. [env: LIVEDELTA_MAX_SESSION_BYTES]"
    )
    var maxSessionBytes: Int = Environment.value("LIVEDELTA_MAX_SESSION_BYTES", default: 1 << 30)

    @Option(
        help:
            "Live subscribers (event streams and long polls) at once, all sessions together; counted apart from --max-connections (503 above). [env: LIVEDELTA_MAX_SUBSCRIBERS]"
    )
    var maxSubscribers: Int = Environment.value("LIVEDELTA_MAX_SUBSCRIBERS", default: 10_000)

    @Option(help: "Live subscribers of one session at once (503 above). [env: LIVEDELTA_MAX_SUBSCRIBERS_PER_SESSION]")
    var maxSubscribersPerSession: Int = Environment.value("LIVEDELTA_MAX_SUBSCRIBERS_PER_SESSION", default: 1_000)

    @Option(help: "Live subscribers of one tenant's sessions at once (429 above). [env: LIVEDELTA_MAX_SUBSCRIBERS_PER_TENANT]")
    var maxSubscribersPerTenant: Int = Environment.value("LIVEDELTA_MAX_SUBSCRIBERS_PER_TENANT", default: 2_500)

    @Option(
        help:
            "Event streams and long polls one client address may start a second, on average, with three seconds' worth at once (429 above); 0: no limit. [env: LIVEDELTA_STREAM_OPENS_PER_SECOND]"
    )
    var streamOpensPerSecond: Int = Environment.value("LIVEDELTA_STREAM_OPENS_PER_SECOND", default: 20)

    @Option(
        help:
            "Bytes sent to all subscribers and not yet read, each event counted once however many it goes to; past it the subscriber whose event does not fit is dropped and new ones get 503. [env: LIVEDELTA_MAX_UNSENT_BYTES]"
    )
    var maxUnsentBytes: Int = Environment.value("LIVEDELTA_MAX_UNSENT_BYTES", default: 256 << 20)

    @Option(help: "Seconds between heartbeat comments on an idle event stream. [env: LIVEDELTA_HEARTBEAT_INTERVAL]")
    var heartbeatInterval: Int = Environment.value("LIVEDELTA_HEARTBEAT_INTERVAL", default: 15)

    @Option(help: "Versions a followed session keeps for subscribers that resume (the latest always). [env: LIVEDELTA_LIVE_HISTORY]")
    var liveHistory: Int = Environment.value("LIVEDELTA_LIVE_HISTORY", default: 256)

    @Option(
        help: "Bytes the kept versions of one followed session may take (as --max-session-bytes counts them). [env: LIVEDELTA_LIVE_HISTORY_BYTES]")
    var liveHistoryBytes: Int = Environment.value("LIVEDELTA_LIVE_HISTORY_BYTES", default: 64 << 20)

    @Option(
        help:
            "Bytes sent to one subscriber and not yet read by it; past them it is dropped (it reconnects and resumes). [env: LIVEDELTA_SUBSCRIBER_BUFFER_BYTES]"
    )
    var subscriberBufferBytes: Int = Environment.value("LIVEDELTA_SUBSCRIBER_BUFFER_BYTES", default: 4 << 20)

    @Option(
        help:
            "Threads for session requests, which may wait for a session's lock or the session store; event-loop threads never wait. [env: LIVEDELTA_WAITING_THREADS]"
    )
    var waitingThreads: Int = Environment.value("LIVEDELTA_WAITING_THREADS", default: 64)

    @Option(
        help:
            "Seconds a write's Idempotency-Key and its first answer are kept, so that a retry gets that answer again. [env: LIVEDELTA_IDEMPOTENCY_RETENTION]"
    )
    var idempotencyRetention: Int = Environment.value("LIVEDELTA_IDEMPOTENCY_RETENTION", default: 86_400)

    @Option(
        help:
            "Bytes of first answers one tenant's Idempotency-Keys may keep in memory (the memory store); past it its oldest keys go first. [env: LIVEDELTA_IDEMPOTENCY_MAX_BYTES_PER_TENANT]"
    )
    var idempotencyMaxBytesPerTenant: Int = Environment.value("LIVEDELTA_IDEMPOTENCY_MAX_BYTES_PER_TENANT", default: 16 << 20)

    @Option(
        help:
            "Bytes of first answers all Idempotency-Keys may keep in memory (the memory store); past it the tenant keeping the most gives up its oldest. [env: LIVEDELTA_IDEMPOTENCY_MAX_BYTES]"
    )
    var idempotencyMaxBytes: Int = Environment.value("LIVEDELTA_IDEMPOTENCY_MAX_BYTES", default: 256 << 20)

    @OptionGroup(title: "Access")
    var access: AuthOptions

    @Option(help: "trace, debug, info (one line per request), notice, warning, error or critical. [env: LIVEDELTA_LOG_LEVEL]")
    var logLevel: Logger.Level = Environment.choice("LIVEDELTA_LOG_LEVEL", default: .info)

    @Option(help: "text or json (one JSON object per line). [env: LIVEDELTA_LOG_FORMAT]")
    var logFormat: LineLogHandler.Format = Environment.choice("LIVEDELTA_LOG_FORMAT", default: .text)

    func validate() throws {
        if let unreadable = Environment.invalid.first {
            throw ValidationError("the environment variable \(unreadable) is not a value its flag takes (see --help)")
        }
        guard (1...256).contains(threads) else { throw ValidationError("--threads must be from 1 to 256") }
        // Body offsets are 32-bit (ByteRange): a body stays well under 4 GiB.
        guard (1...(1 << 31)).contains(maxBodySize) else { throw ValidationError("--max-body-size must be from 1 to 2147483648 (2 GiB)") }
        guard maxBufferedBodyBytes >= maxBodySize, maxBufferedBodyBytes <= 1 << 40 else {
            throw ValidationError("--max-buffered-body-bytes must be at least --max-body-size and at most 1 TiB")
        }
        // Small values (options, values compared in full) are read recursively, on the 8 MiB
        // worker stacks: 1,000 levels fit several times over, even in a debug build.
        guard (1...100_000_000).contains(maxItemsPerRequest), (maxItemsPerRequest...1_000_000_000).contains(maxItemsInFlight) else {
            throw ValidationError(
                "--max-items-per-request must be from 1 to 100000000, --max-items-in-flight from --max-items-per-request to 1000000000")
        }
        guard sessionStore == "memory" || RedisConfiguration(url: sessionStore) != nil else {
            throw ValidationError("--session-store must be memory or redis://[:password@]host[:port][/db]")
        }
        guard (1...60_000).contains(redisTimeout), (1...1_024).contains(redisConnections) else {
            throw ValidationError("--redis-timeout must be from 1 to 60000 ms, --redis-connections from 1 to 1024")
        }
        guard (1...1_000).contains(maxDepth) else { throw ValidationError("--max-depth must be from 1 to 1000") }
        // libmicrohttpd takes its timeout as a C unsigned int; a day is far beyond any use.
        guard (0...86_400).contains(connectionTimeout), (0...86_400).contains(shutdownGrace) else {
            throw ValidationError("--connection-timeout and --shutdown-grace must be from 0 to 86400 seconds")
        }
        guard (1...86_400).contains(headerTimeout) else { throw ValidationError("--header-timeout must be from 1 to 86400 seconds") }
        guard (0...(1 << 30)).contains(minBodyRate) else { throw ValidationError("--min-body-rate must be from 0 to 1073741824 bytes a second") }
        guard (1...1_000_000).contains(maxConnections) else { throw ValidationError("--max-connections must be from 1 to 1000000") }
        // A client's streams count against its connections, so one client (a proxy) may hold
        // up to all of both.
        guard (1...(maxConnections + maxSubscribers)).contains(maxConnectionsPerClient) else {
            throw ValidationError("--max-connections-per-client must be from 1 to --max-connections plus --max-subscribers")
        }
        guard (1...10_000_000).contains(maxSessions), (0...100_000_000).contains(maxSessionItems), (1...31_536_000).contains(sessionIdleTimeout)
        else {
            throw ValidationError(
                "--max-sessions must be from 1 to 10000000, --max-session-items from 0 to 100000000, --session-idle-timeout from 1 to 31536000 seconds"
            )
        }
        guard (1...(1 << 40)).contains(maxSessionBytes) else { throw ValidationError("--max-session-bytes must be from 1 to 1099511627776 (1 TiB)") }
        guard (0...1_000_000).contains(maxSubscribers), (1...1_000_000).contains(maxSubscribersPerSession) else {
            throw ValidationError("--max-subscribers must be from 0 to 1000000, --max-subscribers-per-session from 1 to 1000000")
        }
        guard (1...3_600).contains(heartbeatInterval), (1...1_000_000).contains(liveHistory), (1...(1 << 40)).contains(liveHistoryBytes) else {
            throw ValidationError(
                "--heartbeat-interval must be from 1 to 3600 seconds, --live-history from 1 to 1000000, --live-history-bytes from 1 to 1 TiB")
        }
        guard (1...10_000_000).contains(maxSessionsPerTenant), (1...(1 << 40)).contains(maxSessionBytesPerTenant),
            (1...1_000_000).contains(maxSubscribersPerTenant)
        else {
            throw ValidationError(
                "--max-sessions-per-tenant must be from 1 to 10000000, --max-session-bytes-per-tenant from 1 to 1 TiB, --max-subscribers-per-tenant from 1 to 1000000"
            )
        }
        guard (0...1_000_000).contains(streamOpensPerSecond), ((1 << 20)...(1 << 40)).contains(maxUnsentBytes) else {
            throw ValidationError("--stream-opens-per-second must be from 0 to 1000000, --max-unsent-bytes from 1048576 to 1 TiB")
        }
        guard (1...31_536_000).contains(idempotencyRetention), (1...(1 << 40)).contains(idempotencyMaxBytesPerTenant),
            (idempotencyMaxBytesPerTenant...(1 << 40)).contains(idempotencyMaxBytes)
        else {
            throw ValidationError(
                "--idempotency-retention must be from 1 to 31536000 seconds, --idempotency-max-bytes-per-tenant from 1 to 1 TiB, --idempotency-max-bytes from --idempotency-max-bytes-per-tenant to 1 TiB"
            )
        }
        guard (4_096...(1 << 30)).contains(subscriberBufferBytes), (1...4_096).contains(waitingThreads) else {
            throw ValidationError("--subscriber-buffer-bytes must be from 4096 to 1073741824, --waiting-threads from 1 to 4096")
        }
    }

    func run() throws {
        let (format, level) = (logFormat, logLevel)
        LoggingSystem.bootstrap { LineLogHandler(label: $0, format: format, logLevel: level) }
        let logger = Logger(label: "livedelta")

        var serviceConfiguration = LiveDeltaService.Configuration()
        serviceConfiguration.maxDepth = maxDepth
        serviceConfiguration.maxItemsPerRequest = maxItemsPerRequest
        serviceConfiguration.maxItemsInFlight = maxItemsInFlight
        serviceConfiguration.cors = access.cors
        let metrics = Self.metrics()
        let (sessions, idempotency) = makeSessionStore(logger: logger, metrics: metrics)
        let accessPolicy: AccessPolicy
        do {
            accessPolicy = try access.accessPolicy(logger: logger, host: host)
        } catch {
            logger.critical("cannot start", metadata: ["error": "\(error)"])
            throw ExitCode.failure
        }
        let service = LiveDeltaService(
            configuration: serviceConfiguration, sessions: sessions, live: liveLimits, metrics: metrics, access: accessPolicy,
            idempotency: idempotency, logger: logger)

        var configuration = HTTPServer.Configuration()
        configuration.host = host
        configuration.port = port
        configuration.threads = threads
        configuration.maxBodySize = maxBodySize
        configuration.maxBufferedBodyBytes = maxBufferedBodyBytes
        configuration.connectionTimeoutSeconds = connectionTimeout
        configuration.connectionLimit = maxConnections
        configuration.connectionsPerClient = maxConnectionsPerClient
        configuration.headerTimeoutSeconds = headerTimeout
        configuration.minBodyRate = minBodyRate
        configuration.maxStreams = maxSubscribers
        configuration.streamOpensPerSecond = streamOpensPerSecond
        configuration.streamOpenBurst = streamOpensPerSecond * 3
        configuration.waitingThreads = waitingThreads
        configuration.mayWait = { service.mayWait($0) }
        configuration.errorResponse = { service.errorResponse($0) }
        configuration.onRefusal = { service.refused($0) }

        // Signals are taken by sigwait below; the server's threads inherit this mask.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let server: HTTPServer
        do {
            server = try HTTPServer(configuration: configuration, handler: service.handle)
        } catch {
            logger.critical("cannot start", metadata: ["error": "\(error)"])
            throw ExitCode.failure
        }
        let granted = server.configuration
        if granted.connectionLimit < configuration.connectionLimit || granted.connectionsPerClient < configuration.connectionsPerClient
            || granted.maxStreams < configuration.maxStreams
        {
            logger.warning(
                "connection limits lowered to fit the file descriptors the process may open (raise `ulimit -n` for more)",
                metadata: [
                    "descriptors": .stringConvertible(server.descriptorLimit),
                    "max_connections": "\(granted.connectionLimit) of \(configuration.connectionLimit)",
                    "max_connections_per_client": "\(granted.connectionsPerClient) of \(configuration.connectionsPerClient)",
                    "max_subscribers": "\(granted.maxStreams) of \(configuration.maxStreams)",
                ])
        }
        logger.notice(
            "listening", metadata: ["host": "\(host)", "port": .stringConvertible(Int(server.port)), "threads": .stringConvertible(threads)])
        let storeWatch = sessionStore == "memory" ? nil : StoreWatch(sessions, logger: logger, store: sessionStoreShown)

        var received: Int32 = 0
        sigwait(&signals, &received)
        logger.notice(
            "stopping",
            metadata: ["signal": "\(received == SIGTERM ? "SIGTERM" : "SIGINT")", "in_flight": .stringConvertible(server.requestsInFlight)])
        // Subscribers are told to reconnect (to another replica) and their streams end; the
        // stop waits for none of them.
        storeWatch?.stop()
        let ended = service.live.shutdown()
        if ended > 0 { logger.notice("live streams ended", metadata: ["subscribers": .stringConvertible(ended)]) }
        let outcome = server.stop(grace: .seconds(shutdownGrace))
        guard outcome.drained else {
            // Clients whose requests were cut see an error; the exit status says so too.
            logger.warning(
                "stopped",
                metadata: [
                    "drained": .stringConvertible(false), "cut": .stringConvertible(outcome.cut),
                    "still_computing": .stringConvertible(outcome.computing),
                ])
            throw ExitCode(Self.exitCodeWhenCut)
        }
        logger.notice("stopped", metadata: ["drained": .stringConvertible(true)])
    }

    /// `--session-store` as logs show it: a Redis address without its password.
    var sessionStoreShown: String { RedisConfiguration(url: sessionStore)?.description ?? sessionStore }

    /// The exit status after a stop that had to cut requests off (EX_TEMPFAIL: clients should
    /// retry them); 0 after a stop that drained every request.
    static let exitCodeWhenCut: Int32 = 75

    /// The live hub's limits, from the live flags.
    var liveLimits: LiveHub.Limits {
        var live = LiveHub.Limits()
        live.maxSubscribers = maxSubscribers
        live.maxSubscribersPerSession = maxSubscribersPerSession
        live.maxSubscribersPerTenant = maxSubscribersPerTenant
        live.heartbeatSeconds = heartbeatInterval
        live.historyVersions = liveHistory
        live.historyBytes = liveHistoryBytes
        live.subscriberBufferBytes = subscriberBufferBytes
        live.maxUnsentBytes = maxUnsentBytes
        return live
    }

    /// The memory store, or the Redis store where `--session-store` names a Redis.
    /// The session store, and where writes' Idempotency-Keys are kept beside it.
    func makeSessionStore(logger: Logger, metrics: ServiceMetrics) -> (any SessionStore, any IdempotencyLedger) {
        guard var redis = RedisConfiguration(url: sessionStore) else {
            var keyLimits = InMemoryIdempotencyLedger.Limits()
            keyLimits.retention = .seconds(idempotencyRetention)
            keyLimits.maxBytesPerTenant = idempotencyMaxBytesPerTenant
            keyLimits.maxBytes = idempotencyMaxBytes
            var limits = InMemorySessionStore.Limits()
            limits.maxSessions = maxSessions
            limits.idleTimeout = .seconds(sessionIdleTimeout)
            limits.maxItemsPerSession = maxSessionItems
            limits.maxBytes = maxSessionBytes
            limits.maxSessionsPerTenant = maxSessionsPerTenant
            limits.maxBytesPerTenant = maxSessionBytesPerTenant
            return (
                InMemorySessionStore(limits: limits, logger: logger, events: { metrics.session($0) }), InMemoryIdempotencyLedger(limits: keyLimits)
            )
        }
        redis.connectTimeout = .milliseconds(redisTimeout)
        redis.commandTimeout = .milliseconds(redisTimeout)
        redis.maxConnections = redisConnections
        var limits = SharedSessionStore.Limits()
        limits.idleTimeout = .seconds(sessionIdleTimeout)
        limits.maxItemsPerSession = maxSessionItems
        limits.cachedBytes = maxSessionBytes
        logger.notice("sessions in Redis", metadata: ["redis": "\(redis.description)", "key_prefix": "\(sessionKeyPrefix)"])
        let pool = RedisPool(redis)
        return (
            SharedSessionStore.redis(pool, keyPrefix: sessionKeyPrefix, limits: limits, logger: logger, events: { metrics.session($0) }),
            RedisIdempotencyLedger(redis: pool, keyPrefix: sessionKeyPrefix, retention: .seconds(idempotencyRetention), logger: logger)
        )
    }

    /// Prometheus, through swift-metrics, with buckets that fit what is measured.
    static func metrics() -> ServiceMetrics {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
        let sizes: [Double] = [0, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
        factory.valueHistogramBuckets[ServiceMetrics.itemsInLabel] = sizes
        factory.valueHistogramBuckets[ServiceMetrics.changesOutLabel] = sizes
        return ServiceMetrics(factory: factory, exposition: { registry.emitToBuffer() })
    }
}
