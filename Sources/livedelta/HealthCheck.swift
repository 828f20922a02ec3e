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

    @Option(help: "Its port. [env: LIVEDELTA_PORT]")
    var port: UInt16 = Environment.value("LIVEDELTA_PORT", default: 8080)

    @Option(help: "Seconds to wait for the answer.")
    var timeout = 2

    func run() throws {
        guard status() == 200 else { throw ExitCode.failure }
    }

    /// The status of GET /health, or nil where there is no answer in time.
    func status() -> Int? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        defer { close(socket) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let request = "GET \(ready ? "/ready" : "/health") HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"
        guard request.withCString({ send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count >= 12 else { return nil }
        // "HTTP/1.1 200 ..."
        return Int(String(decoding: buffer[9..<12], as: UTF8.self))
    }
}
