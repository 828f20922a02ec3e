import CMicroHTTPD
import Synchronization

import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The listening socket and the thread that accepts on it, handing connections to the
/// daemons in turn. libmicrohttpd's own thread pool lets whichever thread wakes first take a
/// new connection, and a thread serves its connections one after another; a burst of
/// connections could all land on one thread while the others idle. Dealing them out in turn
/// keeps every core busy.
///
/// The same thread admits connections through the gate (a connection past a limit is
/// answered and closed at once) and, between accepts, sweeps out connections past their
/// deadlines.
final class Acceptor: Sendable {
    let port: UInt16
    private let listener: Int32
    private let daemons: [DaemonHandle]
    private let gate: ConnectionGate
    /// What a refused or timed-out connection is told, as bytes written straight to it.
    private let refusals: (serverFull: [UInt8], clientFull: [UInt8], timeout: [UInt8])
    private let onRefusal: @Sendable (HTTPServerError) -> Void
    private let stopping = Atomic<Bool>(false)
    private let thread = NIOLockedValueBox<pthread_t?>(nil)
    /// Sweeps happen at least this often (nanoseconds).
    private static let sweepInterval: Int64 = 250_000_000

    /// Binds and listens; nothing is accepted before `start`.
    init(
        address: SocketAddress, daemons: [DaemonHandle], gate: ConnectionGate, errorResponse: (HTTPServerError) -> HTTPResponse,
        onRefusal: @escaping @Sendable (HTTPServerError) -> Void
    ) throws(HTTPServer.StartError) {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let socket = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw .cannotListen(host: address.host, port: address.port) }
        var one: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = address.withSockaddrPointer { bind(socket, $0.pointer, $0.length) }
        guard bound == 0, listen(socket, 1_024) == 0 else {
            close(socket)
            throw .cannotListen(host: address.host, port: address.port)
        }
        var actual = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        port = withUnsafeBytes(of: actual) { raw in
            // sin_port and sin6_port both sit right after the family, in network order.
            UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        }
        listener = socket
        self.daemons = daemons
        self.gate = gate
        self.onRefusal = onRefusal
        refusals = (
            errorResponse(.tooManyConnections(limit: gate.limits.connections)).closingBytes(),
            errorResponse(.tooManyConnectionsFromClient(limit: gate.limits.connectionsPerClient)).closingBytes(),
            errorResponse(.requestTimeout).closingBytes()
        )
    }

    func start() {
        let handle = startThread { [self] in run() }
        thread.withLockedValue { $0 = handle }
    }

    /// Stops accepting at once (new connections are refused) and waits for the thread.
    func stop() {
        stopping.store(true, ordering: .releasing)
        // Wakes the blocked accept.
        shutdown(listener, Int32(SHUT_RDWR))
        if let handle = thread.withLockedValue({ $0.take() }) { pthread_join(handle, nil) }
        close(listener)
    }

    private func run() {
        var next = 0
        var lastSweep = monotonicNanoseconds()
        while !stopping.load(ordering: .acquiring) {
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(Self.sweepInterval / 1_000_000))
            let now = monotonicNanoseconds()
            if now - lastSweep >= Self.sweepInterval {
                for expiry in gate.sweep(now: now, timeoutResponse: refusals.timeout) where expiry == .slowRequest {
                    onRefusal(.requestTimeout)
                }
                lastSweep = now
            }
            guard polled > 0 else { continue }
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            guard client >= 0 else {
                if stopping.load(ordering: .acquiring) { break }
                // Out of descriptors or memory: let connections finish before trying again.
                if [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(errno) { usleep(10_000) }
                continue
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            Self.limitUnsent(client)
            switch gate.admit(socket: client, client: ClientAddress(address)) {
            case .admitted: break
            case .serverFull:
                Self.refuse(client, refusals.serverFull)
                onRefusal(.tooManyConnections(limit: gate.limits.connections))
                continue
            case .clientFull:
                Self.refuse(client, refusals.clientFull)
                onRefusal(.tooManyConnectionsFromClient(limit: gate.limits.connectionsPerClient))
                continue
            }
            // libmicrohttpd owns the socket from here, and closes it if it cannot take it.
            let added = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { MHD_add_connection(daemons[next].pointer, client, $0, length) }
            }
            if added != MHD_Result.YES { gate.release(socket: client) }
            next = (next + 1) % daemons.count
        }
    }

    /// Bytes a connection's socket holds that TCP has not sent yet, at most, before it takes
    /// more (`TCP_NOTSENT_LOWAT`).
    static let unsentBytes: Int32 = 128 << 10

    /// Keeps the socket's queue of unsent bytes short, so that it takes more as soon as the
    /// client reads some: libmicrohttpd's idle timeout runs from its last successful send,
    /// and without this a socket whose buffer had grown to megabytes took more only once a
    /// third of it had drained, which a client reading steadily at 40 KB/s needed longer
    /// than the timeout for (it was cut off mid-answer). Bytes in flight are not limited, so
    /// a fast client's throughput is not either.
    private static func limitUnsent(_ socket: Int32) {
        var bytes = unsentBytes
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NOTSENT_LOWAT, &bytes, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Answers a connection that is not let in, and closes it. What the client has sent so
    /// far is read first: closing a socket with unread input resets the connection, and the
    /// client could lose the answer.
    private static func refuse(_ socket: Int32, _ answer: [UInt8]) {
        sendWithoutWaiting(socket, answer)
        shutdown(socket, Int32(SHUT_WR))
        var scratch = [UInt8](repeating: 0, count: 16 << 10)
        for _ in 0..<4 where recv(socket, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {}
        close(socket)
    }
}
