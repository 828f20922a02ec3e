import ByteJSON
import Foundation
import TestSupport
import Testing

@Suite struct LifecycleTests {
    /// A login shell's, systemd's and many containers' limit is 1,024 descriptors, below what
    /// the default 1,000 connections need with the server's own: it starts with fewer
    /// connections, says so, and serves.
    @Test func theServerStartsUnderACommonDescriptorLimitAndSaysWhatItLowered() throws {
        let server = try ServerProcess(descriptorLimit: 1_024)
        let reply = try server.connection().request("POST", "/diff", json: #"{"old":[1,2,3],"new":[3,1,4]}"#)
        #expect(reply.status == 200 && reply.json["changeCount"]?.int == 3)
        #expect(
            server.logShows("connection limits lowered", "descriptors=1024", "max_connections=\"480 of 1000\"", "max_subscribers=\"480 of 10000\""))
        #expect(server.stop() == 0)
    }

    @Test func aBodyOverTheConfiguredLimitIs413AndTheServerGoesOn() throws {
        let server = try ServerProcess(arguments: ["--max-body-size", "100"])
        let reply = try server.connection().request("POST", "/diff", json: "{\"old\":[" + String(repeating: "1,", count: 100) + "1],\"new\":[]}")
        #expect(reply.status == 413 && reply.errorCode == "body_too_large")
        #expect(try server.connection().request("GET", "/health").status == 200)
    }

    /// At the deepest nesting the flag allows, values read as trees (options, and items whose
    /// hashes match but spelling differs) neither overflow a stack nor crash.
    @Test func theDeepestAllowedNestingIsHandledWithoutCrashing() throws {
        let server = try ServerProcess(arguments: ["--max-depth", "1000"])
        let connection = try server.connection()
        let deep = String(repeating: "[", count: 997) + String(repeating: "]", count: 997)
        let options = try connection.request("POST", "/diff", json: #"{"old":[],"new":[],"options":{"compareKeys":"# + deep + "}}")
        #expect(options.status == 422)
        let items = try connection.request("POST", "/diff", json: #"{"old":[{"id":1,"x":"# + deep + #"}],"new":[{"x":"# + deep + #","id":1.0}]}"#)
        let delta = try indexDelta(items.json["delta"])
        #expect(items.status == 200 && delta.changeCount == 0)
        let deeper = String(repeating: "[", count: 1_000) + String(repeating: "]", count: 1_000)
        #expect(try connection.request("POST", "/diff", json: #"{"old":["# + deeper + #"],"new":[]}"#).status == 400)
        #expect(try connection.request("GET", "/health").status == 200)
        #expect(server.stop() == 0)
    }

    /// A body past the offload size runs on the server's own threads for large requests, not
    /// on an event-loop thread: there too the deepest item the flag allows is read as a tree
    /// (`changes: "fields"` builds the changed field's value) and written back.
    @Test func theDeepestAllowedItemIsHandledInAnOffloadedRequestWithFieldChanges() throws {
        let server = try ServerProcess(arguments: ["--max-depth", "1000"])
        let connection = try server.connection()
        // {"old":[{"x": …}]}: the envelope, the array and the item take three levels.
        func deep(_ innermost: String) -> String {
            String(repeating: "[", count: 996) + innermost + String(repeating: "]", count: 996)
        }
        let padding = String(repeating: "p", count: 70_000)
        let body =
            #"{"old":[{"id":1,"x":"# + deep("1") + #"},{"id":2,"pad":""# + padding + #""}],"#
            + #""new":[{"id":1,"x":"# + deep("2") + #"},{"id":2,"pad":""# + padding + #""}],"options":{"changes":"fields"}}"#
        #expect(body.utf8.count > 64 << 10)
        let reply = try connection.request("POST", "/diff", json: body)
        #expect(reply.status == 200)
        let answer = try Array(reply.text.utf8).withUnsafeBufferPointer { try JSONValue(parsing: $0, maxDepth: 1_010) }
        let delta = try indexDelta(answer["delta"])
        #expect(delta.reloads.count == 1 && delta.changeCount == 1)
        // The changed field comes back whole: 996 arrays around the new number.
        guard case .array(let reloads)? = answer["delta"]?["reloads"], let reload = reloads.first else {
            Issue.record("no reload in \(reply.text.prefix(200))")
            return
        }
        var value = reload["changes"]?["set"]?["x"]
        var depth = 0
        while case .array(let elements)? = value, elements.count == 1 {
            depth += 1
            value = elements[0]
        }
        let two = try JSONValue(parsing: "2")
        #expect(depth == 996 && value == two)
        #expect(try connection.request("GET", "/health").status == 200)
        #expect(server.stop() == 0)
    }

    @Test func bodiesPastTheServerWideBudgetGetA503() throws {
        let server = try ServerProcess(arguments: ["--max-body-size", "1000", "--max-buffered-body-bytes", "1000"])
        let holding = try server.connection()
        try holding.send(raw: Array("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n{".utf8))
        usleep(200_000)
        let reply = try server.connection().request("POST", "/diff", json: "{\"old\":[" + String(repeating: "1,", count: 100) + "1],\"new\":[]}")
        #expect(reply.status == 503 && reply.errorCode == "server_busy" && reply.header("Retry-After") == "1")
        #expect(try server.connection().request("GET", "/health").status == 200)
    }

    @Test func environmentVariablesConfigureTheServer() throws {
        let server = try ServerProcess(environment: ["LIVEDELTA_MAX_BODY_SIZE": "100", "LIVEDELTA_LOG_FORMAT": "json"])
        #expect(try server.connection().request("POST", "/diff", json: String(repeating: " ", count: 200)).status == 413)
        #expect(server.log.contains("\"message\":\"listening\""))
    }

    @Test func everyRequestIsLoggedOnOneLine() throws {
        let server = try ServerProcess()
        _ = try server.connection().request("POST", "/diff", json: #"{"old":[1],"new":[2]}"#)
        _ = try server.connection().request("GET", "/nowhere")
        #expect(server.stop() == 0)
        let lines = server.log.split(separator: "\n").filter { $0.contains(" request ") }
        #expect(lines.count == 2, "\(server.log)")
        #expect(
            lines.first?.contains("method=POST") == true && lines.first?.contains("path=/diff") == true && lines.first?.contains("status=200") == true
        )
        #expect(lines.first?.contains("bytes_in=21") == true && lines.first?.contains("duration_ms=") == true)
        #expect(lines.last?.contains("status=404") == true)
    }

    /// Each request line says where it came from, which route and error it was, and its id
    /// (the client's, or one made and sent back); a stream's end is a line of its own.
    @Test func requestLinesNameTheClientRouteCodeAndId() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        let given = try connection.request("GET", "/sessions/nowhere", headers: [("X-Request-Id", "trace-42")])
        #expect(given.status == 404 && given.header("X-Request-Id") == "trace-42")
        let made = try connection.request("POST", "/diff", json: #"{"old":[1],"new":[2]}"#)
        let madeID = try #require(made.header("X-Request-Id"))
        #expect(madeID.count == 16 && madeID.allSatisfy(\.isHexDigit))
        let unfit = try connection.request("GET", "/health", headers: [("X-Request-Id", String(repeating: "x", count: 129))])
        #expect(unfit.header("X-Request-Id")?.count == 16)
        #expect(try connection.request("PUT", "/sessions/s", json: #"{"items": [1, 2]}"#).status == 201)
        do {
            // From another address: the line names it.
            let stream = try EventStreamClient(
                port: server.port, path: "/sessions/s/events?format=batch&since=x.1", headers: [("X-Request-Id", "stream-7")],
                source: "127.0.0.2")
            #expect(try stream.next()?.event == "reset")
        }
        #expect(server.logShows("stream ended", "request_id=stream-7"))
        #expect(server.stop() == 0)
        let lines = server.log.split(separator: "\n")
        let notFound = try #require(lines.first { $0.contains("request_id=trace-42") })
        for field in ["client=127.0.0.1", "route=/sessions/{id}", "code=session_not_found", "status=404"] {
            #expect(notFound.contains(field), "\(field) in \(notFound)")
        }
        #expect(lines.contains { $0.contains(" request ") && $0.contains("request_id=\(madeID)") && $0.contains("route=/diff") })
        let opened = try #require(lines.first { $0.contains(" request ") && $0.contains("request_id=stream-7") })
        #expect(opened.contains(#"query="format=batch""#) && !opened.contains("since") && opened.contains("stream=true"), "\(opened)")
        #expect(opened.contains("client=127.0.0.2"), "\(opened)")
        let ended = try #require(lines.first { $0.contains("stream ended") })
        #expect(ended.contains("route=/sessions/{id}/events") && ended.contains("duration_ms=") && ended.contains("bytes_out="), "\(ended)")
    }

    /// Behind a proxy the server trusts, a request is logged with the address the proxy
    /// forwarded; from anyone else, `X-Forwarded-For` is not believed.
    @Test func aTrustedProxysForwardedAddressIsTheClient() throws {
        let forwarded = [("X-Forwarded-For", "198.51.100.7, 203.0.113.9")]
        let trusting = try ServerProcess(arguments: ["--trusted-proxies", "127.0.0.1, ::1", "--log-format", "json"])
        _ = try trusting.connection().request("GET", "/health", headers: forwarded)
        #expect(trusting.logShows(#""client":"203.0.113.9""#, #""proxy":"127.0.0.1""#), "\(trusting.log)")
        let wary = try ServerProcess(arguments: ["--trusted-proxies", "10.0.0.1"])
        _ = try wary.connection().request("GET", "/health", headers: forwarded)
        #expect(wary.logShows("client=127.0.0.1"))
        #expect(!wary.log.contains("203.0.113.9"))
        let refused = try runProgram([ServerProcess.binary.path, "serve", "--trusted-proxies", "proxy.local"])
        #expect(refused.status != 0 && refused.output.contains("--trusted-proxies: proxy.local is not an IPv4 or IPv6 address"), "\(refused.output)")
    }

    @Test func requestLinesAreLeftOutAboveInfo() throws {
        let server = try ServerProcess(arguments: ["--log-level", "notice"])
        #expect(try server.connection().request("POST", "/diff", json: #"{"old":[1],"new":[2]}"#).status == 200)
        #expect(try server.connection().request("GET", "/nowhere").status == 404)
        #expect(server.stop() == 0)
        #expect(!server.log.contains(" request "), "\(server.log)")
        #expect(server.log.contains("listening"), "\(server.log)")
    }

    @Test func aLargeRequestInFlightIsAnsweredBeforeTheProcessExits() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        let items = (0..<20_000).map(String.init).joined(separator: ",")
        let body = Array("{\"old\":[\(items)],\"new\":[\(items),-1]}".utf8)
        try connection.send(
            raw: Array("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
                + body.prefix(1_000))
        usleep(200_000)
        kill(server.process.processIdentifier, SIGTERM)
        #expect(waitUntilRefused(port: server.port))
        try connection.send(raw: Array(body.dropFirst(1_000)))
        let reply = try connection.readReply()
        #expect(reply.status == 200 && reply.json["animation"]?.stringValue == "reloadSections")
        #expect(server.stop(signal: 0) == 0)
    }

    @Test func aRequestThatNeverCompletesIsCutOffAfterTheGracePeriod() throws {
        let server = try ServerProcess(arguments: ["--shutdown-grace", "1"])
        let connection = try server.connection()
        try connection.send(raw: Array("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{".utf8))
        usleep(200_000)
        let signalled = Date()
        #expect(server.stop(signal: SIGTERM, timeout: 10) == 75)
        let took = Date().timeIntervalSince(signalled)
        #expect(took >= 0.9 && took < 5, "\(took) s")
        #expect(server.logShows("drained=false", "cut=1"))
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalLetsTheRequestInFlightFinishAndExitsZero(signal: Int32) throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        let body = #"{"old":[1,2],"new":[2,3]}"#
        // Headers and half the body: the request is in flight when the signal comes.
        try connection.send(
            raw: Array(
                "POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n{\"old\":[1,".utf8))
        usleep(200_000)
        kill(server.process.processIdentifier, signal)
        #expect(waitUntilRefused(port: server.port))
        try connection.send(raw: Array("2],\"new\":[2,3]}".utf8))
        let reply = try connection.readReply()
        let zero = try JSONValue(parsing: "[0]")
        #expect(reply.status == 200 && reply.json["delta", "deletions"] == zero)
        #expect(server.stop(signal: 0) == 0)
        #expect(server.logShows("drained=true"))
    }

    /// Where the kernel gives huge pages only to memory that asks for them, the server starts
    /// itself again with glibc's tunable that asks (its long sessions' commits copy arrays of
    /// tens of megabytes); the process id stays the one started. A `GLIBC_TUNABLES` the operator
    /// sets, even empty, is theirs: the server runs with it as it is.
    @Test func theServerAsksForHugePagesUnlessTheOperatorSetsTheTunables() throws {
        let mode = (try? String(contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8)) ?? ""
        func tunables(of server: ServerProcess) throws -> String? {
            let environment = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(server.process.processIdentifier)/environ"))
            let variables = environment.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return variables.first { $0.hasPrefix("GLIBC_TUNABLES=") }.map { String($0.dropFirst("GLIBC_TUNABLES=".count)) }
        }
        let asked = try ServerProcess()
        let inherited = ProcessInfo.processInfo.environment["GLIBC_TUNABLES"]
        let expected = inherited ?? (mode.contains("[madvise]") ? "glibc.malloc.hugetlb=1" : nil)
        #expect(try tunables(of: asked) == expected, "transparent huge pages: \(mode)")
        #expect(try asked.connection().request("GET", "/health").status == 200)
        #expect(asked.stop() == 0)
        let chosen = try ServerProcess(environment: ["GLIBC_TUNABLES": ""])
        #expect(try tunables(of: chosen) == "")
        #expect(chosen.stop() == 0)
    }
}
