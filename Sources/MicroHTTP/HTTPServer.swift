import CMicroHTTPD

import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An HTTP/1.1 server on libmicrohttpd: a pool of worker threads, each with its own epoll
/// loop, that hands every complete request (body included) to one handler.
///
/// The handler runs on the worker thread, so it should do bounded work; the thread pool is
/// the concurrency. The server knows nothing of what the application does with requests.
package final class HTTPServer: Sendable {
    package typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    package struct Configuration: Sendable {
        /// A numeric IPv4 or IPv6 address, or `localhost`.
        package var host: String = "0.0.0.0"
        /// 0 picks a free port; `HTTPServer.port` tells which.
        package var port: UInt16 = 8080
        package var threads: Int = HTTPServer.processorCount
        /// Larger bodies are refused with `errorResponse(.bodyTooLarge)`.
        package var maxBodySize: Int = 32 << 20
        /// A connection that sends or reads nothing for this many seconds is closed.
        package var connectionTimeoutSeconds: Int = 30
        /// Connections open at once; one more is answered `errorResponse(.tooManyConnections)`
        /// and closed.
        package var connectionLimit: Int = 1_000
        /// Connections open at once from one client address (`.tooManyConnectionsFromClient`
        /// past it). Behind a proxy every client has the proxy's address: raise it to
        /// `connectionLimit` there.
        package var connectionsPerClient: Int = 256
        /// Seconds a client has to send a whole request head, from connecting or from the
        /// previous response (a kept-alive connection idle this long is closed).
        package var headerTimeoutSeconds: Int = 10
        /// Bytes a second a body must arrive at, on average, once it has taken longer than
        /// `headerTimeoutSeconds`; a slower one is answered `.requestTimeout` and closed.
        package var minBodyRate: Int = 4_096
        /// The longest request target, in bytes (`.uriTooLong` above).
        package var maxURILength: Int = 4 << 10
        /// The longest request line and headers together, in bytes (`.headersTooLarge` above).
        /// Every connection holds memory for a head this long (`connectionMemory`), so it is
        /// what an idle event stream costs: 8 KiB, as Tomcat's default, keeps one near 16 KiB.
        package var maxHeaderBytes: Int = 8 << 10
        /// A body refused for its size or for the budget is still read, and thrown away, up to
        /// this many bytes, so that a client that sends its whole body before reading sees the
        /// answer; past it the connection is closed.
        package var maxDiscardBytes: Int = 64 << 20
        /// Each worker's stack: handlers run on it.
        package var threadStackSize: Int = 8 << 20
        /// Requests with bodies at least this large are handled on a pool that spreads them
        /// over all cores, instead of on their connection's event-loop thread.
        package var offloadBodySize: Int = 64 << 10
        /// Requests the handler may wait in (for a lock, or a store across the network): they are
        /// handled on `waitingThreads` threads of their own, their connections suspended
        /// meanwhile, so that no event-loop thread ever waits and other connections go on.
        package var mayWait: @Sendable (HTTPRequest) -> Bool = { _ in false }
        package var waitingThreads: Int = 64
        /// Connections sending streamed responses (`HTTPResponse.stream`) at once, counted apart
        /// from `connectionLimit` and `connectionsPerClient`; past it, `.tooManyStreams`.
        package var maxStreams: Int = 0
        /// Streams one client address may start a second, on average, with room for
        /// `streamOpenBurst` at once (`.tooManyStreamOpens` past it); 0: no limit.
        package var streamOpensPerSecond: Int = 0
        package var streamOpenBurst: Int = 0
        /// Bodies being received, by all connections together, are held to this many bytes; a
        /// request that would pass it is refused with `errorResponse(.busy)`.
        package var maxBufferedBodyBytes: Int = 1 << 30
        /// Told of each refusal the server makes itself, for counting: it runs on a worker or
        /// the acceptor thread, so it should be quick.
        package var onRefusal: @Sendable (HTTPServerError) -> Void = { _ in }
        /// Told when a connection is closed mid-request because its client took nothing (read
        /// nothing of the answer, sent nothing) for `connectionTimeoutSeconds`, for the log.
        package var onIdleCut: @Sendable () -> Void = {}
        /// How the server's own refusals look.
        package var errorResponse: @Sendable (HTTPServerError) -> HTTPResponse = { error in
            switch error {
            case .bodyTooLarge: HTTPResponse(status: 413)
            case .busy, .tooManyConnections, .tooManyStreams: HTTPResponse(status: 503, headers: [("Retry-After", "1")])
            case .tooManyConnectionsFromClient, .tooManyStreamOpens: HTTPResponse(status: 429, headers: [("Retry-After", "1")])
            case .badRequest: HTTPResponse(status: 400)
            case .uriTooLong: HTTPResponse(status: 414)
            case .headersTooLarge: HTTPResponse(status: 431)
            case .unsupportedTransferCoding: HTTPResponse(status: 501)
            case .requestTimeout: HTTPResponse(status: 408)
            }
        }

        package init() {}
    }

    package enum StartError: Error, CustomStringConvertible {
        case invalidHost(String)
        case cannotListen(host: String, port: UInt16)

        package var description: String {
            switch self {
            case .invalidHost(let host): "'\(host)' is not a numeric IPv4 or IPv6 address"
            case .cannotListen(let host, let port): "cannot listen on \(host):\(port) (in use, or not allowed)"
            }
        }
    }

    /// Read once: glibc answers it by opening and reading `/sys/devices/system/cpu/online`,
    /// and a live feed's fan-out asked on every pass (4% of its threads' samples in a profile
    /// of commits outside thousands of windows on Redis).
    package static let processorCount = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))

    /// The configuration the server runs with: as given, but for connection limits lowered to
    /// fit the descriptors the process may open (compare with what was asked).
    package let configuration: Configuration
    /// File descriptors the process may open, after raising its soft limit to the hard one.
    package let descriptorLimit: Int
    /// The port the server listens on.
    package let port: UInt16
    private let core: ServerCore
    /// The acceptor and the daemons, until `stop` takes them.
    private let running: NIOLockedValueBox<(acceptor: Acceptor, daemons: [DaemonHandle])?>

    /// Starts listening and serving at once: `threads` daemons, each with one event-loop
    /// thread, and an acceptor that deals new connections out to them in turn.
    package init(configuration asked: Configuration, handler: @escaping Handler) throws(StartError) {
        guard let address = SocketAddress(host: asked.host, port: asked.port) else {
            throw .invalidHost(asked.host)
        }
        let descriptors = Self.raiseDescriptorLimit()
        let configuration = Self.fit(asked, descriptors: descriptors)
        let connectionLimit = configuration.connectionLimit
        let gate = ConnectionGate(
            limits: .init(
                connections: connectionLimit, connectionsPerClient: max(1, configuration.connectionsPerClient), streams: configuration.maxStreams,
                streamOpensPerSecond: max(0, configuration.streamOpensPerSecond), streamOpenBurst: max(0, configuration.streamOpenBurst),
                headerTimeout: .seconds(max(1, configuration.headerTimeoutSeconds)), minBodyRate: max(0, configuration.minBodyRate)))
        let core = ServerCore(configuration: configuration, gate: gate, handler: handler)
        // libmicrohttpd calls back with this pointer; `stop` drops the retain after the daemons end.
        let context = Unmanaged.passRetained(core).toOpaque()
        let threads = max(1, configuration.threads)
        // The gate holds the real limit; libmicrohttpd's is set above anything one daemon can
        // be dealt, so that it never refuses a connection itself (see `ConnectionGate`).
        var config = CMicroHTTPDConfig(
            connection_limit: UInt32(clamping: connectionLimit + configuration.maxStreams + 16),
            connection_timeout_seconds: UInt32(clamping: max(0, configuration.connectionTimeoutSeconds)),
            connection_memory_limit: Self.connectionMemory(for: configuration), thread_stack_size: max(1 << 20, configuration.threadStackSize))
        var daemons = [DaemonHandle]()
        for _ in 0..<threads {
            guard let daemon = cmhd_start(&config, accessCallback, context, completedCallback, context, connectionCallback, context) else { break }
            daemons.append(DaemonHandle(pointer: daemon))
        }
        let acceptor: Acceptor
        do throws(StartError) {
            guard daemons.count == threads else { throw StartError.cannotListen(host: configuration.host, port: configuration.port) }
            acceptor = try Acceptor(
                address: address, daemons: daemons, gate: gate, errorResponse: configuration.errorResponse, onRefusal: configuration.onRefusal)
        } catch {
            for daemon in daemons { MHD_stop_daemon(daemon.pointer) }
            Unmanaged<ServerCore>.fromOpaque(context).release()
            throw error
        }
        acceptor.start()
        self.configuration = configuration
        self.descriptorLimit = descriptors
        self.core = core
        self.port = acceptor.port
        self.running = NIOLockedValueBox((acceptor, daemons))
    }

    /// Descriptors the process needs besides its connections: the listener, each daemon's
    /// epoll and wake-up descriptors, logs, and some to spare.
    static let descriptorsBesideConnections = 64

    /// The soft descriptor limit, raised to the hard one first (as Go's runtime and nginx's
    /// `worker_rlimit_nofile` do): the soft limit is often far below what the system grants.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        let resource = __rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue))
        guard getrlimit(resource, &limit) == 0 else { return Int.max }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            // RLIM_INFINITY is all bits set; Int(clamping:) keeps it as Int.max.
            if setrlimit(resource, &raised) == 0 { return Int(clamping: raised.rlim_max) }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// The configuration with its connection limits lowered, where `descriptors` cannot hold
    /// them, to what fits (each connection and each stream takes one descriptor). A server
    /// that starts with fewer connections than asked serves; one that refuses to start does
    /// not, and the caller says what was lowered (`HTTPServer.fitted`).
    static func fit(_ configuration: Configuration, descriptors: Int) -> Configuration {
        var fitted = configuration
        fitted.connectionLimit = max(1, configuration.connectionLimit)
        fitted.maxStreams = max(0, configuration.maxStreams)
        let room = max(2, descriptors - descriptorsBesideConnections)
        let needed = fitted.connectionLimit + fitted.maxStreams
        guard needed > room else { return fitted }
        // Both shrink in proportion, but requests keep at least half the room (or all they
        // asked for), so that many streams asked for cannot starve ordinary requests.
        let proportional = Int((Double(fitted.connectionLimit) * Double(room) / Double(needed)).rounded(.down))
        let connections = max(1, min(fitted.connectionLimit, max(room / 2, proportional)))
        fitted.maxStreams = min(fitted.maxStreams, room - connections)
        fitted.connectionLimit = room - fitted.maxStreams
        fitted.connectionsPerClient = min(max(1, configuration.connectionsPerClient), fitted.connectionLimit + fitted.maxStreams)
        return fitted
    }

    /// libmicrohttpd's memory for one connection's head and buffers: room for the largest head
    /// the server accepts, so that the server, not libmicrohttpd, decides which heads are too
    /// large and says so in its own words, and 8 KiB beside it for the headers' entries, the
    /// answer's head and the stretch of a body written at a time.
    ///
    /// It is most of what an idle event stream costs: libmicrohttpd reads a head into half of
    /// this memory and zeroes what the head left unused once it is read, so about half of it
    /// stays resident for as long as the connection lives (docs/performance.md, live).
    static func connectionMemory(for configuration: Configuration) -> Int {
        max(configuration.maxHeaderBytes, configuration.maxURILength) + (8 << 10)
    }

    /// Connections open now, streams included.
    package var openConnections: Int { core.gate.count }

    /// Connections sending streamed responses now.
    package var openStreams: Int { core.gate.streamCount }

    /// Requests whose headers have arrived and whose response is not yet sent.
    package var requestsInFlight: Int { core.inFlight.load(ordering: .relaxed) }

    /// Bytes of request bodies being received or handled now.
    package var bufferedBodyBytes: Int { core.buffered.load(ordering: .relaxed) }

    /// How a stop ended.
    package struct StopOutcome: Sendable, Equatable {
        /// Requests still being received, computed or sent at the deadline, and cut off.
        package var cut: Int
        /// Of those, requests whose handler was still computing. Their connections are
        /// suspended, which libmicrohttpd cannot stop: the daemons are left running, and the
        /// caller should end the process.
        package var computing: Int
        /// Every request in flight finished within the grace period.
        package var drained: Bool { cut == 0 }
    }

    /// Stops accepting connections at once and lets requests in flight finish, their responses
    /// sent completely, for up to `grace`. At the deadline it closes every connection: a
    /// client still receiving sees its response cut short (fewer bytes than its
    /// `Content-Length`), which HTTP clients report as an error. It never waits for a handler
    /// past the deadline (see `StopOutcome.computing`).
    @discardableResult
    package func stop(grace: Duration = .seconds(10)) -> StopOutcome {
        guard let (acceptor, daemons) = running.withLockedValue({ $0.take() }) else { return StopOutcome(cut: 0, computing: 0) }
        core.stopping.store(true, ordering: .relaxed)
        acceptor.stop()
        let deadline = ContinuousClock.now + grace
        // An offloaded request's job counts itself out just after it resumes its connection,
        // which may finish the request first: both counts are waited for.
        while core.inFlight.load(ordering: .acquiring) > 0 || core.offloaded.load(ordering: .acquiring) > 0, ContinuousClock.now < deadline {
            usleep(2_000)
        }
        // Streams still open at the deadline are cut (their writers should have closed them
        // within the grace period): their connections resume, end, and can then be stopped.
        let open = core.streams.withLockedValue { Array($0.values) }
        for stream in open { stream.abort() }
        let streamsCut = ContinuousClock.now + .seconds(1)
        while !open.isEmpty && core.streams.withLockedValue({ !$0.isEmpty }) && ContinuousClock.now < streamsCut { usleep(2_000) }
        let cut = core.inFlight.load(ordering: .acquiring)
        let computing = core.offloaded.load(ordering: .acquiring)
        // Stopping a daemon with a suspended connection breaks libmicrohttpd's rules.
        guard computing == 0 else { return StopOutcome(cut: cut, computing: computing) }
        for daemon in daemons { MHD_stop_daemon(daemon.pointer) }
        core.hangups.stop()
        core.stopPools()
        Unmanaged.passUnretained(core).release()
        return StopOutcome(cut: cut, computing: 0)
    }
}

/// A daemon's address.
// @unchecked Sendable: libmicrohttpd lets any thread add connections to a daemon and stop it;
// the acceptor adds connections until it is stopped, and only then does `stop` stop the daemon.
struct DaemonHandle: @unchecked Sendable {  // thread-safe libmicrohttpd calls only; see above
    let pointer: OpaquePointer
}

// The daemons' context is the core, retained by `HTTPServer` from before the first daemon
// starts until after the last one stops, so a callback borrows it (`_withUnsafeGuaranteedRef`)
// rather than retaining and releasing it: both worker threads would otherwise count references
// on the one object at every call, and its cache line would move between cores.
private let accessCallback: MHD_AccessHandlerCallback = { context, connection, url, method, version, upload, uploadSize, state in
    guard let context, let connection, let url, let method, let uploadSize, let state else { return .NO }
    return Unmanaged<ServerCore>.fromOpaque(context)._withUnsafeGuaranteedRef {
        $0.access(connection, url: url, method: method, version: version, upload: upload, uploadSize: uploadSize, state: state)
    }
}

private let completedCallback: MHD_RequestCompletedCallback = { context, connection, state, termination in
    guard let context else { return }
    Unmanaged<ServerCore>.fromOpaque(context)._withUnsafeGuaranteedRef {
        $0.completed(connection, state, timedOut: termination == .REQUEST_TERMINATED_TIMEOUT_REACHED)
    }
}

private let connectionCallback: MHD_NotifyConnectionCallback = { context, connection, socketContext, event in
    guard let context, let connection, let socketContext else { return }
    Unmanaged<ServerCore>.fromOpaque(context)._withUnsafeGuaranteedRef {
        $0.connection(connection, socketContext, started: event.rawValue == 0 /* MHD_CONNECTION_NOTIFY_STARTED */)
    }
}
