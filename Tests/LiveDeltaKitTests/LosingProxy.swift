import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A proxy in front of the server that forwards each request whole and reads the server's whole
/// answer, but for the first `losing` requests closes the client's connection instead of
/// passing the answer on (or, `holding`, keeps it open and silent until `close`): a write that
/// happened, whose answer the client never sees.
// @unchecked Sendable: `remaining` is read and written under `lock`; the rest is set once.
final class LosingProxy: @unchecked Sendable {  // guarded by `lock`; see above
    let port: UInt16
    private let listener: Int32
    private let target: UInt16
    private let lock = NSLock()
    private var remaining: Int
    private(set) var forwarded = 0
    /// Whether a lost answer's connection is held open, never answered, until `close`.
    private let holding: Bool
    private let held = DispatchSemaphore(value: 0)

    /// Requests answered 408 by the proxy itself, before any is forwarded (a request it timed out).
    private var timingOut: Int

    init(forwardingTo target: UInt16, losing count: Int, holding: Bool = false, timingOut: Int = 0) throws {
        self.target = target
        remaining = count
        self.holding = holding
        self.timingOut = timingOut
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, length) } }
        listen(listening, 16)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listening, $0, &length) } }
        listener = listening
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    func close() {
        _ = shutdown(listener, Int32(SHUT_RDWR))
        held.signal()
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        defer { _ = Glibc.close(client) }
        guard let request = Self.readMessage(client) else { return }
        let timeOut = lock.withLock {
            guard timingOut > 0 else { return false }
            timingOut -= 1
            return true
        }
        if timeOut {
            let body = #"{"error":{"code":"request_timeout","message":"the request did not arrive in time"}}"#
            let head =
                "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
            _ = Self.write(Array((head + body).utf8), to: client)
            return
        }
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { _ = Glibc.close(server) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = target.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0, Self.write(request, to: server), let answer = Self.readMessage(server) else { return }
        let lose = lock.withLock {
            forwarded += 1
            guard remaining > 0 else { return false }
            remaining -= 1
            return true
        }
        if !lose {
            _ = Self.write(answer, to: client)
        } else if holding {
            held.wait()  // the client's connection stays open, its answer never sent
            held.signal()
        }
    }

    /// One HTTP message: its head, then a body of `Content-Length` bytes.
    private static func readMessage(_ socket: Int32) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var expected: Int?
        while expected.map({ bytes.count < $0 }) ?? true {
            let count = read(socket, &buffer, buffer.count)
            guard count > 0 else { return expected == nil ? nil : bytes }
            bytes += buffer[0..<count]
            if expected == nil, let end = bytes.indices.first(where: { $0 + 3 < bytes.count && bytes[$0..<$0 + 4] == [13, 10, 13, 10] }) {
                let head = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                expected = end + 4 + length
            }
        }
        return bytes
    }

    private static func write(_ bytes: [UInt8], to socket: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.write(socket, $0.baseAddress, $0.count) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }
}
