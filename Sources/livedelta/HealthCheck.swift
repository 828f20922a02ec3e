import ArgumentParser

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// For a container's HEALTHCHECK: asks a running server's `/health` and exits 0 when it
/// answers 200, 1 otherwise. Needs no tool in the image but the binary itself.
struct HealthCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthcheck", abstract: "Ask a running server's /health (or /ready with --ready); exit 0 on a 200, 1 otherwise.")

    @Flag(help: "Ask /ready (the session store answers) instead of /health (the process serves).")
    var ready = false

    @Option(help: "Numeric IPv4 address of the server.")
    var host = "127.0.0.1"

    @Option(help: "Its port.")
    var port: UInt16 = 8080

    @Option(help: "Seconds to wait for the answer.")
    var timeout = 2

    func run() throws {
        // A probe's output is what an operator reads first when a container keeps restarting:
        // it says what failed, not only that something did.
        switch check() {
        case .success(let status) where status == 200:
            print("ok: \(path) answered 200")
        case .success(let status):
            print("unhealthy: \(path) on \(host):\(port) answered \(status)")
            throw ExitCode.failure
        case .failure(let failure):
            print("unhealthy: \(path) on \(host):\(port): \(failure.description)")
            throw ExitCode.failure
        }
    }

    private var path: String { ready ? "/ready" : "/health" }

    /// Why there was no status.
    enum Failure: Error, CustomStringConvertible {
        case invalidHost
        case refused
        case timedOut(seconds: Int)
        case connect(errno: Int32)
        case closed
        case malformed

        var description: String {
            switch self {
            case .invalidHost: "the host is not a numeric IPv4 address"
            case .refused: "connection refused (is the server running, on this port?)"
            case .timedOut(let seconds): "no answer within \(seconds) s"
            case .connect(let code): "cannot connect: \(String(cString: strerror(code)))"
            case .closed: "the server closed the connection without answering"
            case .malformed: "the answer is not HTTP"
            }
        }
    }

    /// The status of GET /health (or /ready), or why there is none.
    func check() -> Result<Int, Failure> {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return .failure(.connect(errno: errno)) }
        defer { close(socket) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return .failure(.invalidHost) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            if code == ECONNREFUSED { return .failure(.refused) }
            if code == EINPROGRESS || code == ETIMEDOUT || code == EAGAIN { return .failure(.timedOut(seconds: timeout)) }
            return .failure(.connect(errno: code))
        }
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"
        guard request.withCString({ send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }) > 0 else { return .failure(.closed) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count < 0 { return .failure(errno == EAGAIN || errno == EWOULDBLOCK ? .timedOut(seconds: timeout) : .closed) }
        if count == 0 { return .failure(.closed) }
        // "HTTP/1.1 200 ..."
        guard count >= 12, buffer.starts(with: Array("HTTP/".utf8)), let status = Int(String(decoding: buffer[9..<12], as: UTF8.self)) else {
            return .failure(.malformed)
        }
        return .success(status)
    }
}
