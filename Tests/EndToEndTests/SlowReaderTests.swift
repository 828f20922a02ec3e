import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A client that reads slowly but steadily gets a large answer whole, however long it takes: the
/// server's idle timeout measures the client's progress, not how long ago the server last wrote
/// to a socket whose buffer had grown to megabytes. A client that stops reading is cut, and the
/// log says why.
@Suite struct SlowReaderTests {
    /// One request on a socket of its own, its answer read at most `rate` bytes a second until
    /// `whole` says it is all there (or the server closes, or nothing comes for a minute).
    static func read(port: UInt16, _ request: String, rate: Int, whole: ([UInt8]) -> Bool) throws -> [UInt8] {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(socket >= 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        var patience = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
        _ = Array(request.utf8).withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let started = ContinuousClock.now
        while !whole(received) {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[0..<count]
            // Never ahead of the rate: sleep until the bytes so far are due.
            let due = Duration.seconds(Double(received.count) / Double(rate))
            let elapsed = ContinuousClock.now - started
            if due > elapsed {
                let (seconds, attoseconds) = (due - elapsed).components
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
            }
        }
        return received
    }

    /// Where the head ends, and the `Content-Length` it declares.
    static func framing(_ bytes: [UInt8]) -> (bodyStart: Int, length: Int)? {
        let text = String(decoding: bytes.prefix(4_096), as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n"), let field = text.range(of: "Content-Length: ") else { return nil }
        let digits = text[field.upperBound...].prefix { $0.isNumber }
        guard let length = Int(digits) else { return nil }
        return (text.utf8.distance(from: text.startIndex, to: end.upperBound), length)
    }

    /// Whether the answer is all there: its `Content-Length`, or a chunked body's last chunk.
    @Sendable static func complete(_ bytes: [UInt8]) -> Bool {
        if let (start, length) = framing(bytes) { return bytes.count >= start + length }
        return bytes.count > 5 && bytes.suffix(7).elementsEqual(Array("\r\n0\r\n\r\n".utf8))
    }

    /// 12 MB read at 40 KB/s takes about five minutes: a GET, an event stream's reset and a long
    /// poll's, side by side, each whole. Before, each was cut at about 5.4 MB after 135 s.
    @Test func aSteadySlowReaderGetsATwelveMegabyteSessionWhole() throws {
        let server = try ServerProcess()
        let item = String(repeating: "x", count: 990)
        let items = (0..<12_000).map { "{\"id\":\($0),\"t\":\"\(item)\"}" }.joined(separator: ",")
        #expect(try server.connection().request("PUT", "/sessions/big", json: "{\"items\":[\(items)]}").status == 201)
        let head = "Host: x\r\nConnection: close\r\n\r\n"
        let readers: [(String, @Sendable ([UInt8]) -> Bool)] = [
            ("GET /sessions/big HTTP/1.1\r\n" + head, Self.complete),
            ("GET /sessions/big/changes?wait=0 HTTP/1.1\r\n" + head, Self.complete),
            // The reset's end: its data line's blank line (looked for in the last bytes only, as
            // this is asked after every read).
            (
                "GET /sessions/big/events HTTP/1.1\r\n" + head,
                { $0.count > 12_000_000 && $0.suffix(4_096).firstRange(of: Array("}\n\n".utf8)) != nil }
            ),
        ]
        let answers = Mutex<[Int: [UInt8]]>([:])
        let port = server.port
        // Threads of their own, all at once: `concurrentPerform` runs as many at a time as there
        // are cores, and each reader spends five minutes mostly asleep.
        let done = DispatchGroup()
        for index in readers.indices {
            let (request, whole) = readers[index]
            done.enter()
            Thread.detachNewThread {
                let answer = (try? Self.read(port: port, request, rate: 40_000, whole: whole)) ?? []
                answers.withLock { $0[index] = answer }
                done.leave()
            }
        }
        done.wait()
        let got = answers.withLock { $0 }
        // Counts and flags only in the expectations: a message holding 12 MB would be printed.
        for index in readers.indices {
            let count = got[index]?.count ?? 0
            let whole = readers[index].1(got[index] ?? []) && count > 12_000_000
            #expect(whole, "\(readers[index].0.prefix(40)): cut at \(count) bytes")
        }
    }

    /// A client that stops reading holds its connection only for --connection-timeout, and the
    /// log says why it was closed.
    @Test func aClientThatStopsReadingIsCutAndTheLogSaysWhy() throws {
        let server = try ServerProcess(arguments: ["--connection-timeout", "2", "--log-level", "info"])
        let item = String(repeating: "x", count: 990)
        let items = (0..<12_000).map { "{\"id\":\($0),\"t\":\"\(item)\"}" }.joined(separator: ",")
        #expect(try server.connection().request("PUT", "/sessions/big", json: "{\"items\":[\(items)]}").status == 201)
        let stalled = try server.connection()
        try stalled.send(raw: Array("GET /sessions/big HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let deadline = Date().addingTimeInterval(60)
        while !server.logShows("connection closed mid-request") && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(server.logShows("connection closed mid-request"), "no log line says why the stalled reader was cut")
        #expect(try server.connection().request("GET", "/health").status == 200)
    }
}
