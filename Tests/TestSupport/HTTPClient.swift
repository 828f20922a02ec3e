#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A response as a test sees it.
public struct Reply: Sendable, CustomStringConvertible {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
    public var description: String { "\(status) \(text)" }
}

public enum ClientError: Error {
    case connect(Int32)
    /// The server closed the connection (or reset it).
    case closed
    /// No answer within the connection's timeout.
    case timedOut
    case malformed(String)
}

/// A minimal blocking HTTP/1.1 client over one TCP connection to 127.0.0.1, for tests: it
/// writes requests byte for byte as asked, and reads a response by its Content-Length.
public final class HTTPConnection {
    public let socket: Int32
    private var buffer: [UInt8] = []

    /// - Parameter source: the loopback address to connect from (127.0.0.2 is another client).
    public init(port: UInt16, timeoutSeconds: Int = 30, source: String? = nil) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            _ = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // No close here: a class whose properties are all set runs its deinit when its init
        // throws, so closing here too would close the number twice, the second time perhaps
        // another thread's new descriptor (it once was a run loop's, and Foundation trapped).
        if result != 0 { throw ClientError.connect(errno) }
    }

    deinit { close(socket) }

    /// Ends the connection in both directions now, as a client that goes away does (the
    /// descriptor itself is closed with the object).
    public func shutDown() { _ = Glibc.shutdown(socket, Int32(SHUT_RDWR)) }

    public func send(raw bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw ClientError.timedOut }
            if n <= 0 { throw ClientError.closed }
            sent += n
        }
    }

    public func request(
        _ method: String, _ path: String, body: [UInt8]? = nil,
        headers: [(String, String)] = [("Content-Type", "application/json")]
    ) throws -> Reply {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(raw: Array(head.utf8) + (body ?? []))
        return try readReply(method: method)
    }

    public func request(_ method: String, _ path: String, json: String, headers: [(String, String)] = [("Content-Type", "application/json")]) throws
        -> Reply
    {
        try request(method, path, body: Array(json.utf8), headers: headers)
    }

    public func readReply(method: String = "GET") throws -> Reply {
        while true {
            if let end = headerEnd() {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
                guard let statusLine = lines.first, statusLine.split(separator: " ").count >= 2,
                    let status = Int(statusLine.split(separator: " ")[1])
                else { throw ClientError.malformed(head) }
                lines.removeFirst()
                let headers = lines.compactMap { line -> (name: String, value: String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingSpaces)
                }
                if method != "HEAD", headers.contains(where: { $0.name.lowercased() == "transfer-encoding" && $0.value.lowercased() == "chunked" }) {
                    buffer.removeFirst(end + 4)
                    return Reply(status: status, headers: headers, body: try readChunkedBody())
                }
                let length = method == "HEAD" ? 0 : headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
                while buffer.count < end + 4 + length { try fill() }
                let body = Array(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                return Reply(status: status, headers: headers, body: body)
            }
            try fill()
        }
    }

    /// A chunked body, to its last chunk (trailers are not read: the server sends none).
    private func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            var lineEnd: Int?
            while lineEnd == nil {
                lineEnd = buffer.count < 2 ? nil : (0..<(buffer.count - 1)).first { buffer[$0] == 13 && buffer[$0 + 1] == 10 }
                if lineEnd == nil { try fill() }
            }
            let sizeText = String(decoding: buffer[..<lineEnd!], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(String(sizeText.filter { $0 != " " }), radix: 16) else { throw ClientError.malformed("chunk size") }
            while buffer.count < lineEnd! + 2 + size + 2 { try fill() }
            body += buffer[(lineEnd! + 2)..<(lineEnd! + 2 + size)]
            buffer.removeFirst(lineEnd! + 2 + size + 2)
            if size == 0 { return body }
        }
    }

    /// Whether the server has closed the connection (reads end of stream).
    public func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, 0) == 0
    }

    private func headerEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw ClientError.timedOut }
        if n <= 0 { throw ClientError.closed }
        buffer.append(contentsOf: chunk[..<n])
    }
}

extension String {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

/// Waits until nothing accepts connections on `port` any more; false if something still does
/// after `seconds`.
public func waitUntilRefused(port: UInt16, seconds: Double = 10) -> Bool {
    eventually(within: seconds) { (try? HTTPConnection(port: port)) == nil }
}
