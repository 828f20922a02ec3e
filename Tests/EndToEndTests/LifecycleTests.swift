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
