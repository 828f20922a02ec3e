import ArgumentParser
import LiveDeltaRedis
import LiveDeltaService
import Logging
import MicroHTTP
import Prometheus
import RedisClient
import RedisCluster

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension LineLogHandler.Format: ExpressibleByArgument {}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the HTTP service (the default).",
        discussion: """
            Every flag may be set by an environment variable instead: LIVEDELTA_ and the flag's name in capitals, - as _ \
            (--max-body-size: LIVEDELTA_MAX_BODY_SIZE); a repeatable flag's variable takes a comma-separated list. \
            A flag on the command line wins; a variable its flag cannot take stops start-up.
            """)

    @Option(help: "Address to listen on: numeric IPv4 or IPv6, or localhost.")
    var host: String = "0.0.0.0"

    @Option(help: "Port to listen on; 0 picks a free one.")
    var port: UInt16 = 8080

    @Option(help: "Worker threads, each with its own epoll loop; one per core where not given.")
    var threads: Int?

    /// `--threads`, or one per core.
    var workerThreads: Int { threads ?? HTTPServer.processorCount }

    @Option(help: "Largest request body in bytes (413 above).")
    var maxBodySize: Int = 32 << 20

    @Option(help: "Bytes of request bodies held at once, by all connections together (503 above).")
    var maxBufferedBodyBytes: Int = 1 << 30

    @Option(help: "Deepest JSON nesting accepted, up to 1000 (400 above).")
    var maxDepth: Int = 512

    @Option(help: "Most items in one request body, all its collections together (413 above).")
    var maxItemsPerRequest: Int = 2_000_000

    @Option(
        help:
            "Most items read from bodies and not yet answered, all requests together (503 above). Each costs at most a few hundred bytes while its request runs, so this bounds what bodies make the server hold beyond their own bytes."
    )
    var maxItemsInFlight: Int = 8_000_000

    @Option(
        help:
            "Seconds a connection may send and read nothing (mid-body, or not reading its answer) before it is closed; a client reading an answer at any steady rate is never cut."
    )
    var connectionTimeout: Int = 30

    @Option(
        help:
            "Most connections open at once; one more is answered 503 and closed. The server raises its descriptor limit to fit, or refuses to start."
    )
    var maxConnections: Int = 1_000

    @Option(
        help:
            "Most connections open at once from one client address, its event streams and long polls included (429 above); behind a proxy, set it to --max-connections plus --max-subscribers, and --stream-opens-per-second to 0."
    )
    var maxConnectionsPerClient: Int = 256

    @Option(
        help:
            "Seconds a client has for a request's line and headers, from connecting or from its previous answer, however steadily the bytes come (408, then closed). A kept-alive connection idle this long is closed without an answer."
    )
    var headerTimeout: Int = 10

    @Option(
        help:
            "Bytes a second a request body must arrive at, on average, once it has taken longer than --header-timeout (408 below)."
    )
    var minBodyRate: Int = 4_096

    @Option(
        help:
            "Bytes a request's line and headers may take together (431 above). Each connection holds memory for a head this long, about half of it resident: raise it only for clients with large cookies or tokens."
    )
    var maxHeaderBytes: Int = 8_192

    @Option(help: "Seconds that requests in flight get to finish after SIGTERM or SIGINT.")
    var shutdownGrace: Int = 10

    @Option(
        help:
            "Where sessions live: memory (this process), redis://[:password@]host[:port][/db] (shared by replicas, kept across restarts), or redis-cluster://[:password@]host:port[,host:port...] (a Redis Cluster, any of its nodes as seeds)."
    )
    var sessionStore: String = "memory"

    @Option(help: "Prefix of the Redis keys sessions are kept under.")
    var sessionKeyPrefix: String = "livedelta:"

    @Option(help: "Milliseconds to wait for Redis to connect, and for each command's answer.")
    var redisTimeout: Int = 1_000

    @Option(help: "Connections to Redis open at once, at most.")
    var redisConnections: Int = 16

    @Option(
        help:
            "A JSON file of sources: ordered PostgreSQL queries that sessions can be created from and are kept up to date by (docs/sources.md). Needs --postgres."
    )
    var sources: String?

    @Option(
        help:
            "The PostgreSQL the sources read, as a libpq connection string (host=/run/postgresql dbname=app, or postgresql://user@host/db)."
    )
    var postgres: String?

    @Option(help: "Most sessions the memory store holds at once; when full, the least recently used idle one is evicted.")
    var maxSessions: Int = 10_000

    @Option(
        help:
            "Most sessions one tenant (the namespace a token names) may hold. Past it the memory store evicts the tenant's own least recently used idle session, never another tenant's (429 where none is idle); the Redis store answers 429."
    )
    var maxSessionsPerTenant: Int = 1_000

    @Option(
        help:
            "Bytes one tenant's sessions may take, as --max-session-bytes counts them. The memory store evicts within the tenant only (429 where nothing is idle); the Redis store answers 429."
    )
    var maxSessionBytesPerTenant: Int = 256 << 20

    @Option(help: "Seconds a session may stay unused before it expires.")
    var sessionIdleTimeout: Int = 900

    @Option(help: "Most items one session may hold (413 above).")
    var maxSessionItems: Int = 100_000

    @Option(
        help:
            "Bytes sessions take in this process: their bodies as sent, plus \(SessionFootprint.bytesPerItem) per item and \(SessionFootprint.bytesPerBody) per body. The memory store evicts the least recently used idle sessions to stay within it; the Redis store drops parsed copies."
    )
    var maxSessionBytes: Int = 1 << 30

    @Option(
        help:
            "Live subscribers (event streams and long polls) at once, all sessions together; counted apart from --max-connections (503 above)."
    )
    var maxSubscribers: Int = 10_000

    @Option(help: "Live subscribers of one session at once (503 above).")
    var maxSubscribersPerSession: Int = 1_000

    @Option(help: "Live subscribers of one tenant's sessions at once (429 above).")
    var maxSubscribersPerTenant: Int = 2_500

    @Option(
        help:
            "Event streams and long polls one client address may start a second, on average, with three seconds' worth at once (429 above); 0: no limit."
    )
    var streamOpensPerSecond: Int = 20

    @Option(
        help:
            "Bytes sent to all subscribers and not yet read, each event counted once however many it goes to; past it the subscriber whose event does not fit is dropped and new ones get 503."
    )
    var maxUnsentBytes: Int = 256 << 20

    @Option(help: "Seconds between heartbeat comments on an idle event stream.")
    var heartbeatInterval: Int = 15

    @Option(help: "The most rows a window of a session (`limit`, read or followed) may ask for, overscan not counted.")
    var maxWindowRows: Int = 1_000

    @Option(help: "Versions a followed session keeps for subscribers that resume (the latest always).")
    var liveHistory: Int = 256

    @Option(
        help: "Bytes the kept versions of one followed session may take (as --max-session-bytes counts them).")
    var liveHistoryBytes: Int = 64 << 20

    @Option(
        help:
            "Bytes sent to one subscriber and not yet read by it, besides one larger event it is still reading (a large session's reset goes out whole, as the client reads it); past them it is dropped (it reconnects and resumes)."
    )
    var subscriberBufferBytes: Int = 4 << 20

    @Option(
        help:
            "Threads for session requests, which may wait for a session's lock or the session store; event-loop threads never wait."
    )
    var waitingThreads: Int = 64

    @Option(
        help:
            "Seconds a write's Idempotency-Key and its first answer are kept, so that a retry gets that answer again."
    )
    var idempotencyRetention: Int = 86_400

    @Option(
        help:
            "Bytes of first answers one tenant's Idempotency-Keys may keep in memory (the memory store); past it its oldest keys go first."
    )
    var idempotencyMaxBytesPerTenant: Int = 16 << 20

    @Option(
        help:
            "Bytes of first answers all Idempotency-Keys may keep in memory (the memory store); past it the tenant keeping the most gives up its oldest."
    )
    var idempotencyMaxBytes: Int = 256 << 20

    @Option(
        help:
            "A write's first answer larger than this many bytes is not kept under its Idempotency-Key (any store): a retry then gets 409 idempotency_answer_lost, saying the write took effect, with the version in ETag."
    )
    var idempotencyMaxAnswerBytes: Int = 256 << 10

    @OptionGroup(title: "Access")
    var access: AuthOptions

    @Option(help: "trace, debug, info (one line per request), notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(help: "text or json (one JSON object per line).")
    var logFormat: LineLogHandler.Format = .text

    @Option(
        help:
            "Addresses of proxies (load balancers) in front of the server, comma-separated: a request from one is logged with the client address its X-Forwarded-For gives."
    )
    var trustedProxies: String = ""

    /// `--trusted-proxies` read.
    var trustedProxyAddresses: Set<String> {
        Set(trustedProxies.split(separator: ",").map { String($0.filter { $0 != " " }) }.filter { !$0.isEmpty })
    }

    func validate() throws {
        guard !EnvironmentArguments.readingValue.load(ordering: .relaxed) else { return }
        if let unreadable = EnvironmentArguments.invalid.first {
            throw ValidationError("the environment variable \(unreadable) is not a value its flag takes (see --help)")
        }
        for address in trustedProxyAddresses {
            var bytes = in6_addr()
            guard inet_pton(AF_INET, address, &bytes) == 1 || inet_pton(AF_INET6, address, &bytes) == 1 else {
                throw ValidationError("--trusted-proxies: \(address) is not an IPv4 or IPv6 address")
            }
        }
        guard (1...256).contains(workerThreads) else { throw ValidationError("--threads must be from 1 to 256") }
        guard (sources == nil) == (postgres == nil) else {
            throw ValidationError("--sources and --postgres go together: the sources file's queries run on that PostgreSQL")
        }
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
        guard sessionStore == "memory" || RedisConfiguration(url: sessionStore) != nil || RedisClusterConfiguration(url: sessionStore) != nil
        else {
            throw ValidationError(
                "--session-store must be memory, redis://[:password@]host[:port][/db] or redis-cluster://[:password@]host:port[,host:port...] (database 0 only)"
            )
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
        guard (4_096...(1 << 20)).contains(maxHeaderBytes) else { throw ValidationError("--max-header-bytes must be from 4096 to 1048576") }
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
        guard (1...100_000).contains(maxWindowRows) else { throw ValidationError("--max-window-rows must be from 1 to 100000") }
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
            (idempotencyMaxBytesPerTenant...(1 << 40)).contains(idempotencyMaxBytes), (0...(1 << 30)).contains(idempotencyMaxAnswerBytes)
        else {
            throw ValidationError(
                "--idempotency-retention must be from 1 to 31536000 seconds, --idempotency-max-bytes-per-tenant from 1 to 1 TiB, --idempotency-max-bytes from --idempotency-max-bytes-per-tenant to 1 TiB, --idempotency-max-answer-bytes from 0 to 1 GiB"
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
        serviceConfiguration.maxRecordedAnswerBytes = idempotencyMaxAnswerBytes
        serviceConfiguration.trustedProxies = trustedProxyAddresses
        let metrics = Self.metrics()
        let (sessions, idempotency, leases) = makeSessionStore(logger: logger, metrics: metrics)
        let accessPolicy: AccessPolicy
        let sessionSources: (any SessionSources)?
        do {
            accessPolicy = try access.accessPolicy(logger: logger, host: host)
            sessionSources = try makeSources(store: sessions, leases: leases, metrics: metrics, logger: logger)
        } catch {
            logger.critical("cannot start", metadata: ["error": "\(error)"])
            throw ExitCode.failure
        }
        let service = LiveDeltaService(
            configuration: serviceConfiguration, sessions: sessions, live: liveLimits, metrics: metrics, access: accessPolicy,
            idempotency: idempotency, sources: sessionSources, logger: logger)

        let configuration = httpConfiguration(for: service)

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
            "listening", metadata: ["host": "\(host)", "port": .stringConvertible(Int(server.port)), "threads": .stringConvertible(workerThreads)])
        let storeWatch = sessionStore == "memory" ? nil : StoreWatch(sessions, logger: logger, store: sessionStoreShown)

        var received: Int32 = 0
        sigwait(&signals, &received)
        try stop(server, service, storeWatch: storeWatch, signal: received, logger: logger)
    }

    /// The stop on SIGTERM or SIGINT, in the order docs/design.md gives (Threads).
    private func stop(_ server: HTTPServer, _ service: LiveDeltaService, storeWatch: StoreWatch?, signal received: Int32, logger: Logger) throws {
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
        service.stop()
        logger.notice("stopped", metadata: ["drained": .stringConvertible(true)])
    }

    /// The HTTP server's settings, from the flags, answering with `service`.
    func httpConfiguration(for service: LiveDeltaService) -> HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration()
        configuration.host = host
        configuration.port = port
        configuration.threads = workerThreads
        configuration.maxBodySize = maxBodySize
        configuration.maxBufferedBodyBytes = maxBufferedBodyBytes
        configuration.connectionTimeoutSeconds = connectionTimeout
        configuration.connectionLimit = maxConnections
        configuration.connectionsPerClient = maxConnectionsPerClient
        configuration.headerTimeoutSeconds = headerTimeout
        configuration.minBodyRate = minBodyRate
        configuration.maxHeaderBytes = maxHeaderBytes
        configuration.maxStreams = maxSubscribers
        configuration.streamOpensPerSecond = streamOpensPerSecond
        configuration.streamOpenBurst = streamOpensPerSecond * 3
        configuration.waitingThreads = waitingThreads
        configuration.mayWait = { service.mayWait($0) }
        configuration.errorResponse = { service.errorResponse($0) }
        configuration.onRefusal = { service.refused($0) }
        let idle = connectionTimeout
        let logger = Logger(label: "livedelta")
        configuration.onIdleCut = {
            logger.notice(
                "connection closed mid-request: its client took nothing of the answer for \(idle) s (--connection-timeout); a client must keep reading"
            )
        }
        return configuration
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
        live.maxWindowRows = maxWindowRows
        return live
    }

    /// The memory store, or the Redis store where `--session-store` names a Redis; where writes'
    /// Idempotency-Keys are kept beside it, and which sessions sources feed.
    func makeSessionStore(logger: Logger, metrics: ServiceMetrics) -> (any SessionStore, any IdempotencyLedger, any SourceLeases) {
        guard let redis = redisCommands() else {
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
                InMemorySessionStore(limits: limits, logger: logger, events: { metrics.session($0) }), InMemoryIdempotencyLedger(limits: keyLimits),
                LocalSourceLeases()
            )
        }
        var limits = SharedSessionStore.Limits()
        limits.idleTimeout = .seconds(sessionIdleTimeout)
        limits.maxItemsPerSession = maxSessionItems
        limits.cachedBytes = maxSessionBytes
        limits.maxSessionsPerTenant = maxSessionsPerTenant
        limits.maxBytesPerTenant = maxSessionBytesPerTenant
        logger.notice("sessions in Redis", metadata: ["redis": "\(redis.description)", "key_prefix": "\(sessionKeyPrefix)"])
        let pool = redis
        return (
            SharedSessionStore.redis(pool, keyPrefix: sessionKeyPrefix, limits: limits, logger: logger, events: { metrics.session($0) }),
            RedisIdempotencyLedger(redis: pool, keyPrefix: sessionKeyPrefix, retention: .seconds(idempotencyRetention), logger: logger),
            RedisSourceLeases(redis: pool, keyPrefix: sessionKeyPrefix)
        )
    }

    /// One Redis or a cluster, as `--session-store` names it, with the Redis flags' timeouts
    /// and connections (a cluster: each node's); nil for memory.
    func redisCommands() -> (any RedisCommands)? {
        func configured(_ node: inout RedisConfiguration) {
            node.connectTimeout = .milliseconds(redisTimeout)
            node.commandTimeout = .milliseconds(redisTimeout)
            node.maxConnections = redisConnections
        }
        if var redis = RedisConfiguration(url: sessionStore) {
            configured(&redis)
            return RedisPool(redis)
        }
        guard var cluster = RedisClusterConfiguration(url: sessionStore) else { return nil }
        configured(&cluster.node)
        return RedisClusterPool(cluster)
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
