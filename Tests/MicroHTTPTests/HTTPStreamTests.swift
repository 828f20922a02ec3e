import Dispatch
import Foundation
import Glibc
import MicroHTTP
import TestSupport
import Testing

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// A server whose `/stream` answers a stream it hands to `streams`, and whose other paths
/// answer at once.
private func streamingServer(
    threads: Int = 1, maxStreams: Int = 8, maxBuffered: Int = 1 << 20, streams: NIOLockedValueBox<[HTTPStream]>
) throws -> HTTPServer {
    var configuration = HTTPServer.Configuration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.threads = threads
    configuration.maxStreams = maxStreams
    configuration.mayWait = { $0.path == "/slow" || $0.path == "/waiting-stream" }
    return try HTTPServer(configuration: configuration) { request in
        if request.path == "/slow" {
            usleep(300_000)
            return HTTPResponse(status: 200, body: Array("slow".utf8))
        }
        if request.path == "/waiting-stream" {
            let stream = HTTPStream(maxBuffered: maxBuffered)
            stream.write(Array("retry: 1000\n\n".utf8))
            streams.withLockedValue { $0.append(stream) }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")], stream: stream)
        }
        guard request.path == "/stream" else { return HTTPResponse(status: 200, body: Array((request.query("q") ?? "none").utf8)) }
        let stream = HTTPStream(maxBuffered: maxBuffered)
        streams.withLockedValue { $0.append(stream) }
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")], stream: stream)
    }
}

@Suite struct HTTPStreamTests {
    @Test func bytesWrittenFromAnotherThreadArriveAsTheyAreWrittenAndCloseEndsTheBody() throws {
        let streams = NIOLockedValueBox<[HTTPStream]>([])
        let server = try streamingServer(streams: streams)
        defer { server.stop(grace: .seconds(1)) }
        let client = try EventStreamClient(port: server.port, path: "/stream")
        #expect(client.status == 200 && client.header("Transfer-Encoding") == "chunked")
        try waitUntil { streams.withLockedValue { $0.count } == 1 }
        let stream = streams.withLockedValue { $0[0] }
        for number in 1...3 {
            // Each event arrives before the next is written: the connection was suspended
            // with nothing to send, and a write resumed it.
            #expect(stream.write(Array("id: \(number)\ndata: event \(number)\n\n".utf8)))
            let event = try client.next()
            #expect(event?.id == "\(number)" && event?.data == "event \(number)")
        }
        #expect(server.openStreams == 1)
        stream.close()
        #expect(try client.next() == nil)
        try waitUntil { !stream.isOpen && server.openStreams == 0 }
    }

    /// Writes to many streams within `batchingWakes` resume their connections at its end: each
    /// client gets its events, batch after batch (each connection suspended again between them),
    /// and a stream closed within a batch ends. A batch with a limit resumes them each time that
    /// many have gathered: three clients get their event while it still runs, the fourth at its
    /// end.
    @Test func writesWithinABatchAreSentWhenItEnds() throws {
        let streams = NIOLockedValueBox<[HTTPStream]>([])
        let server = try streamingServer(threads: 2, streams: streams)
        defer { server.stop(grace: .seconds(1)) }
        let clients = try (0..<4).map { _ in try EventStreamClient(port: server.port, path: "/stream") }
        try waitUntil { streams.withLockedValue { $0.count } == clients.count }
        let written = streams.withLockedValue { $0 }
        for number in 1...3 {
            let accepted = HTTPStream.batchingWakes { written.map { $0.write(Array("id: \(number)\ndata: event \(number)\n\n".utf8)) } }
            #expect(accepted.allSatisfy { $0 })
            for client in clients { #expect(try client.next()?.data == "event \(number)") }
        }
        let (accepted, early) = try HTTPStream.batchingWakes(limit: 3) {
            (written.map { $0.write(Array("data: early\n\n".utf8)) }, try clients.prefix(3).map { try $0.next()?.data })
        }
        #expect(accepted.allSatisfy { $0 } && early == ["early", "early", "early"])
        #expect(try clients[3].next()?.data == "early")
        HTTPStream.batchingWakes { for stream in written { stream.close() } }
        for client in clients { #expect(try client.next() == nil) }
        try waitUntil { server.openStreams == 0 }
    }

    /// A stream answered from a waiting thread, with bytes written before it was sent.
    @Test func aStreamFromAWaitingThreadSendsEachEventAsItIsWritten() throws {
        let streams = NIOLockedValueBox<[HTTPStream]>([])
        let server = try streamingServer(streams: streams)
        defer { server.stop(grace: .seconds(1)) }
        let client = try EventStreamClient(port: server.port, path: "/waiting-stream", timeoutSeconds: 5)
        try waitUntil { streams.withLockedValue { $0.count } == 1 }
        let stream = streams.withLockedValue { $0[0] }
        for number in 1...3 {
            usleep(50_000)
            #expect(stream.write(Array("id: \(number)\ndata: event \(number)\n\n".utf8)))
            #expect(try client.next()?.id == "\(number)")
        }
        stream.close()
    }

    @Test func aStreamHoldsNoThreadAndOtherRequestsOnItsThreadGoOn() throws {
        let streams = NIOLockedValueBox<[HTTPStream]>([])
        let server = try streamingServer(threads: 1, maxStreams: 32, streams: streams)
        defer { server.stop(grace: .seconds(1)) }
        let idle = try (0..<20).map { _ in try EventStreamClient(port: server.port, path: "/stream") }
        #expect(idle.allSatisfy { $0.status == 200 })
        let reply = try HTTPConnection(port: server.port).request("GET", "/plain?q=a%20b&x")
        #expect(reply.status == 200 && reply.text == "a b")
        // A request that waits runs on a waiting thread: the event-loop thread answers others meanwhile.
        let slow = DispatchGroup()
        let slowReply = NIOLockedValueBox<Int>(0)
        DispatchQueue.global().async(group: slow) {
            slowReply.withLockedValue { $0 = (try? HTTPConnection(port: server.port).request("GET", "/slow").status) ?? 0 }
        }
        usleep(50_000)
        let started = Date()
        #expect(try HTTPConnection(port: server.port).request("GET", "/plain").status == 200)
        #expect(Date().timeIntervalSince(started) < 0.25)
        slow.wait()
        #expect(slowReply.withLockedValue { $0 } == 200)
        for stream in streams.withLockedValue({ $0 }) { stream.close() }
        for client in idle { #expect(client.waitForEnd()) }
    }

    @Test func streamsPastTheirLimitAre503AndDoNotCountAsConnections() throws {
        let streams = NIOLockedValueBox<[HTTPStream]>([])
        let server = try streamingServer(maxStreams: 2, streams: streams)
        defer { server.stop(grace: .seconds(1)) }
        let first = try EventStreamClient(port: server.port, path: "/stream")
        let second = try EventStreamClient(port: server.port, path: "/stream")
        let third = try EventStreamClient(port: server.port, path: "/stream")
        #expect(first.status == 200 && second.status == 200 && third.status == 503)
        #expect(server.openStreams == 2)
        // The refused stream's own object was let go of (told it is closed).
        try waitUntil { streams.withLockedValue { $0.filter(\.isOpen).count } == 2 }
        for stream in streams.withLockedValue({ $0 }) { stream.close() }
        #expect(first.waitForEnd() && second.waitForEnd())
    }

    @Test func aClientThatDoesNotReadIsDroppedPastTheBufferAndTheWriterNeverWaits() throws {
        let streams = NIOLockedValueBox<[HTTPStream]>([])
        let server = try streamingServer(maxBuffered: 64 << 10, streams: streams)
        defer { server.stop(grace: .seconds(1)) }
        let reader = try EventStreamClient(port: server.port, path: "/stream")
        #expect(reader.status == 200)
        try waitUntil { streams.withLockedValue { $0.count } == 1 }
        let stream = streams.withLockedValue { $0[0] }
        let chunk = [UInt8](repeating: 0x61, count: 8 << 10) + Array("\n\n".utf8)
        var accepted = 0
        let started = Date()
        // The socket's buffers take some megabytes; past them, and past 64 KiB held, it is dropped.
        while stream.write(chunk), accepted < 100_000 { accepted += 1 }
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(!stream.isOpen && accepted < 100_000)
        try waitUntil { server.openStreams == 0 }
    }
}
