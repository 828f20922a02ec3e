import Dispatch
import Foundation
import Glibc
import MicroHTTP
import TestSupport
import Testing

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// Echoes what it got: method, path, a header and the body.
func echoServer(_ configure: (inout HTTPServer.Configuration) -> Void = { _ in }) throws -> HTTPServer {
    var configuration = HTTPServer.Configuration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.threads = 2
    // The client deadlines run on the wall clock: under ThreadSanitizer on CI's loaded two
    // cores, a 200 KB upload here once took 164 s and was cut off as too slow (a 408). No test
    // here is about them (ConnectionGateTests and the end-to-end HostileInputTests are), so
    // they are far off unless a test sets them.
    configuration.headerTimeoutSeconds = 3_600
    configuration.minBodyRate = 0
    configuration.connectionTimeoutSeconds = 3_600
    configure(&configuration)
    return try HTTPServer(configuration: configuration) { request in
        HTTPResponse(
            status: 200, headers: [("X-Method", request.method), ("X-Path", request.path), ("X-Test", request.header("x-TEST") ?? "-")],
            body: request.body.array)
    }
}

/// Waits until `condition` holds; fails the test rather than hang past `seconds`.
func waitUntil(seconds: Double = 30, _ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
    guard eventually(within: seconds, condition) else {
        Issue.record("waited \(seconds) s in vain", sourceLocation: sourceLocation)
        throw ClientError.closed
    }
}

@Suite struct HTTPServerTests {
    @Test func aRequestReachesTheHandlerWithItsBodyAndHeaders() throws {
        let server = try echoServer()
        defer { server.stop() }
        #expect(server.port != 0)
        let connection = try HTTPConnection(port: server.port)
        let body = Array((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        let reply = try connection.request("PUT", "/some/where", body: body, headers: [("X-Test", "yes")])
        #expect(reply.status == 200)
        #expect(reply.header("X-Method") == "PUT" && reply.header("X-Path") == "/some/where" && reply.header("X-Test") == "yes")
        #expect(reply.body == body)
        // The connection stays open for the next request.
        #expect(try connection.request("GET", "/again").header("X-Path") == "/again")
    }

    @Test func aDeclaredBodyOverTheLimitIsRefusedBeforeItIsRead() throws {
        let server = try echoServer {
            $0.maxBodySize = 1_000
            $0.errorResponse = { _ in HTTPResponse(status: 413, body: Array("too big".utf8)) }
        }
        defer { server.stop() }
        let reply = try HTTPConnection(port: server.port).request("POST", "/", body: [UInt8](repeating: 1, count: 1_001))
        #expect(reply.status == 413 && reply.text == "too big")
        #expect(try HTTPConnection(port: server.port).request("POST", "/", body: [UInt8](repeating: 1, count: 1_000)).status == 200)
    }

    @Test func aChunkedBodyOverTheLimitIsRefusedToo() throws {
        let server = try echoServer { $0.maxBodySize = 100 }
        defer { server.stop() }
        let connection = try HTTPConnection(port: server.port)
        let chunk = String(repeating: "x", count: 80)
        try connection.send(
            raw: Array("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n50\r\n\(chunk)\r\n50\r\n\(chunk)\r\n0\r\n\r\n".utf8))
        #expect(try connection.readReply().status == 413)
    }

    @Test func bodiesBeyondTheServerWideBudgetAreRefusedUntilOthersFinish() throws {
        let server = try echoServer {
            $0.maxBodySize = 1_000
            $0.maxBufferedBodyBytes = 1_500
        }
        defer { server.stop() }
        let holding = try HTTPConnection(port: server.port)
        // 800 bytes declared and held: in flight.
        try holding.send(raw: Array("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 800\r\n\r\nab".utf8))
        try waitUntil { server.bufferedBodyBytes >= 800 }
        let refused = try HTTPConnection(port: server.port).request("POST", "/b", body: [UInt8](repeating: 1, count: 800))
        #expect(refused.status == 503 && refused.header("Retry-After") == "1")
        #expect(try HTTPConnection(port: server.port).request("POST", "/c", body: [UInt8](repeating: 1, count: 600)).status == 200)
        try holding.send(raw: [UInt8](repeating: 0x78, count: 798))
        #expect(try holding.readReply().status == 200)
        try waitUntil { server.bufferedBodyBytes == 0 }
        #expect(try HTTPConnection(port: server.port).request("POST", "/d", body: [UInt8](repeating: 1, count: 800)).status == 200)
        // /d's bytes count until libmicrohttpd completes it, which may be after its answer arrived.
        try waitUntil { server.bufferedBodyBytes == 0 }
        // A chunked body that runs past the budget is refused at its end.
        let chunked = try HTTPConnection(port: server.port)
        try holding.send(raw: Array("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 900\r\n\r\n".utf8))
        try waitUntil { server.bufferedBodyBytes >= 900 }
        let chunk = String(repeating: "y", count: 0x2bc)
        try chunked.send(raw: Array("POST /f HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2bc\r\n\(chunk)\r\n0\r\n\r\n".utf8))
        #expect(try chunked.readReply().status == 503)
    }

    @Test func stopLetsARequestInFlightFinishAndRefusesNewConnections() throws {
        let server = try echoServer()
        let connection = try HTTPConnection(port: server.port)
        // Headers sent, body still owed: the request is in flight.
        try connection.send(raw: Array("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab".utf8))
        try waitUntil { server.requestsInFlight > 0 }
        let stopped = NIOLockedValueBox<Bool?>(nil)
        DispatchQueue.global().async { stopped.withLockedValue { $0 = server.stop(grace: .seconds(10)).drained } }
        #expect(waitUntilRefused(port: server.port))
        try connection.send(raw: Array("cde".utf8))
        let reply = try connection.readReply()
        #expect(reply.status == 200 && reply.text == "abcde")
        #expect(reply.header("Connection") == "close")
        try waitUntil { stopped.withLockedValue({ $0 }) != nil }
        #expect(stopped.withLockedValue { $0 } == true)
    }

    @Test func largeBodiesAreHandledOffTheEventLoopThreadAndAnswered() throws {
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.offloadBodySize = 1_000
        let server = try HTTPServer(configuration: configuration) { request in
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.filter { $0 != "\n" } ?? "?"
            return HTTPResponse(status: 200, headers: [("X-Thread", name)], body: request.body.array)
        }
        defer { server.stop() }
        let connection = try HTTPConnection(port: server.port)
        let small = try connection.request("POST", "/", body: [UInt8](repeating: 7, count: 999))
        #expect(small.header("X-Thread")?.hasPrefix("MHD") == true && small.body.count == 999, "\(small.header("X-Thread") ?? "")")
        for _ in 0..<3 {
            let large = try connection.request("POST", "/", body: [UInt8](repeating: 9, count: 100_000))
            #expect(large.status == 200 && large.header("X-Thread") == "http-large" && large.body == [UInt8](repeating: 9, count: 100_000))
        }
        #expect(server.stop().drained)
    }

    @Test func aNonNumericHostIsRefused() {
        var configuration = HTTPServer.Configuration()
        configuration.host = "example.com"
        #expect(throws: HTTPServer.StartError.self) { try HTTPServer(configuration: configuration) { _ in HTTPResponse(status: 200) } }
    }

    @Test func aTakenPortIsReported() throws {
        let first = try echoServer()
        defer { first.stop() }
        #expect(throws: HTTPServer.StartError.self) { try echoServer { $0.port = first.port } }
    }
}

@Suite struct HTTPRequestTests {
    @Test func headersAreFoundWhateverTheirCase() {
        let request = HTTPRequest(method: "GET", path: "/", headers: [("content-TYPE", "a"), ("If-Match", "b"), ("X-[", "c")])
        #expect(request.header("Content-Type") == "a" && request.header("if-match") == "b")
        #expect(request.header("X-{") == nil && request.header("Content-Typ") == nil)
    }

    @Test func fieldsKeepTheirOrderRepeatsAndBytes() {
        let sent: [(name: String, value: String)] = [("Accept", "a/b"), ("Empty", ""), ("accept", "c/d"), ("X-Name", "é ✓ \u{1F600}")]
        let fields = HeaderFields(sent)
        #expect(fields.all.map(\.name) == sent.map(\.name) && fields.all.map(\.value) == sent.map(\.value))
        #expect(fields.first("ACCEPT") == "a/b" && fields.values("Accept") == ["a/b", "c/d"])
        #expect(fields.first("empty") == "" && fields.first("x-name") == "é ✓ \u{1F600}" && fields.first("missing") == nil)
        #expect(HeaderFields().all.isEmpty && HeaderFields().first("Accept") == nil)
    }
}
