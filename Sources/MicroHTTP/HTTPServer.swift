import CMicroHTTPD
import Synchronization

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
public final class HTTPServer: Sendable {
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    public struct Configuration: Sendable {
        /// A numeric IPv4 or IPv6 address, or `localhost`.
        public var host: String = "0.0.0.0"
        /// 0 picks a free port; `HTTPServer.port` tells which.
        public var port: UInt16 = 8080
        public var threads: Int = HTTPServer.processorCount
        /// Larger bodies are refused with `errorResponse(.bodyTooLarge)`.
        public var maxBodySize: Int = 32 << 20
        /// An idle connection is closed after this many seconds.
        public var connectionTimeoutSeconds: Int = 30
        public var connectionLimit: Int = 1_000
        /// Each worker's stack: handlers run on it.
        public var threadStackSize: Int = 8 << 20
        /// Requests with bodies at least this large are handled on a pool that spreads them
        /// over all cores, instead of on their connection's event-loop thread.
        public var offloadBodySize: Int = 64 << 10
        /// Bodies being received, by all connections together, are held to this many bytes; a
        /// request that would pass it is refused with `errorResponse(.busy)`.
        public var maxBufferedBodyBytes: Int = 1 << 30
        /// How the server's own refusals look.
        public var errorResponse: @Sendable (HTTPServerError) -> HTTPResponse = { error in
            switch error {
            case .bodyTooLarge: HTTPResponse(status: 413)
            case .busy: HTTPResponse(status: 503, headers: [("Retry-After", "1")])
            }
        }

        public init() {}
    }

    public enum StartError: Error, CustomStringConvertible {
        case invalidHost(String)
        case cannotListen(host: String, port: UInt16)

        public var description: String {
            switch self {
            case .invalidHost(let host): "'\(host)' is not a numeric IPv4 or IPv6 address"
            case .cannotListen(let host, let port): "cannot listen on \(host):\(port) (in use, or not allowed)"
            }
        }
    }

    public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    public let configuration: Configuration
    /// The port the server listens on.
    public let port: UInt16
    private let core: ServerCore
    /// The acceptor and the daemons, until `stop` takes them.
    private let running: Mutex<(acceptor: Acceptor, daemons: [DaemonHandle])?>

    /// Starts listening and serving at once: `threads` daemons, each with one event-loop
    /// thread, and an acceptor that deals new connections out to them in turn.
    public init(configuration: Configuration, handler: @escaping Handler) throws(StartError) {
        guard let address = SocketAddress(host: configuration.host, port: configuration.port) else {
            throw .invalidHost(configuration.host)
        }
        let core = ServerCore(configuration: configuration, handler: handler)
        // libmicrohttpd calls back with this pointer; `stop` drops the retain after the daemons end.
        let context = Unmanaged.passRetained(core).toOpaque()
        let threads = max(1, configuration.threads)
        var config = CMicroHTTPDConfig(
            connection_limit: UInt32(max(1, (configuration.connectionLimit + threads - 1) / threads)),
            connection_timeout_seconds: UInt32(max(0, configuration.connectionTimeoutSeconds)),
            connection_memory_limit: 16 << 10, thread_stack_size: max(1 << 20, configuration.threadStackSize))
        var daemons = [DaemonHandle]()
        for _ in 0..<threads {
            guard let daemon = cmhd_start(&config, accessCallback, context, completedCallback, context) else { break }
            daemons.append(DaemonHandle(pointer: daemon))
        }
        let acceptor: Acceptor
        do throws(StartError) {
            guard daemons.count == threads else { throw StartError.cannotListen(host: configuration.host, port: configuration.port) }
            acceptor = try Acceptor(address: address, daemons: daemons)
        } catch {
            for daemon in daemons { MHD_stop_daemon(daemon.pointer) }
            Unmanaged<ServerCore>.fromOpaque(context).release()
            throw error
        }
        acceptor.start()
        self.configuration = configuration
        self.core = core
        self.port = acceptor.port
        self.running = Mutex((acceptor, daemons))
    }

    /// Requests whose headers have arrived and whose response is not yet sent.
    public var requestsInFlight: Int { core.inFlight.load(ordering: .relaxed) }

    /// Bytes of request bodies being received or handled now.
    public var bufferedBodyBytes: Int { core.buffered.load(ordering: .relaxed) }

    /// Stops accepting connections at once, lets requests in flight finish for up to `grace`,
    /// then closes everything. Returns whether every request in flight finished in time.
    @discardableResult
    public func stop(grace: Duration = .seconds(10)) -> Bool {
        guard let (acceptor, daemons) = running.withLock({ $0.take() }) else { return true }
        core.stopping.store(true, ordering: .relaxed)
        acceptor.stop()
        let deadline = ContinuousClock.now + grace
        while core.inFlight.load(ordering: .acquiring) > 0 && ContinuousClock.now < deadline {
            usleep(2_000)
        }
        let finished = core.inFlight.load(ordering: .acquiring) == 0
        // Stopping with a suspended connection is not allowed: let offloaded requests (bounded
        // work) answer and resume theirs first.
        while core.offloaded.load(ordering: .acquiring) > 0 { usleep(1_000) }
        for daemon in daemons { MHD_stop_daemon(daemon.pointer) }
        Unmanaged.passUnretained(core).release()
        return finished
    }
}

/// A daemon's address.
// @unchecked Sendable: libmicrohttpd lets any thread add connections to a daemon and stop it;
// the acceptor adds connections until it is stopped, and only then does `stop` stop the daemon.
struct DaemonHandle: @unchecked Sendable {  // thread-safe libmicrohttpd calls only; see above
    let pointer: OpaquePointer
}

private let accessCallback: MHD_AccessHandlerCallback = { context, connection, url, method, _, upload, uploadSize, state in
    guard let context, let connection, let url, let method, let uploadSize, let state else { return .NO }
    return Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
        .access(connection, url: url, method: method, upload: upload, uploadSize: uploadSize, state: state)
}

private let completedCallback: MHD_RequestCompletedCallback = { context, _, state, _ in
    guard let context else { return }
    Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().completed(state)
}
