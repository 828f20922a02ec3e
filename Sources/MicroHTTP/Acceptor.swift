import CMicroHTTPD
import Synchronization

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
final class Acceptor: Sendable {
    let port: UInt16
    private let listener: Int32
    private let daemons: [DaemonHandle]
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<pthread_t?>(nil)

    /// Binds and listens; nothing is accepted before `start`.
    init(address: SocketAddress, daemons: [DaemonHandle]) throws(HTTPServer.StartError) {
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
    }

    func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        pthread_create(&handle, nil, { context in
            let acceptor = Unmanaged<Acceptor>.fromOpaque(context!).takeRetainedValue()
            acceptor.run()
            return nil
        }, context)
        thread.withLock { $0 = handle }
    }

    /// Stops accepting at once (new connections are refused) and waits for the thread.
    func stop() {
        stopping.store(true, ordering: .releasing)
        // Wakes the blocked accept.
        shutdown(listener, Int32(SHUT_RDWR))
        if let handle = thread.withLock({ $0.take() }) { pthread_join(handle, nil) }
        close(listener)
    }

    private func run() {
        var next = 0
        while !stopping.load(ordering: .acquiring) {
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
            // libmicrohttpd owns the socket from here, and closes it if it cannot take it.
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { MHD_add_connection(daemons[next].pointer, client, $0, length) }
            }
            next = (next + 1) % daemons.count
        }
    }
}
