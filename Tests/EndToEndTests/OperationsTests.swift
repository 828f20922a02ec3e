import ByteJSON
import Foundation
import LiveDeltaService
import TestSupport
import Testing

/// The value of one Prometheus sample line (`name{labels} value`), or nil.
func sample(_ exposition: String, _ line: String) -> Double? {
    exposition.split(separator: "\n").first { $0.hasPrefix(line + " ") }.flatMap { Double($0.split(separator: " ").last!) }
}

@Suite struct OperationsTests {
    @Test func metricsCountRequestsErrorsDiffsAndSessions() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        let before = try connection.request("GET", "/metrics")
        #expect(before.status == 200 && before.header("Content-Type")?.hasPrefix("text/plain") == true)
        #expect(sample(before.text, #"livedelta_requests_total{route="/diff",status="200"}"#) == nil)

        for _ in 0..<3 { _ = try connection.request("POST", "/diff", json: #"{"old":[1,2,3],"new":[3,4]}"#) }
        _ = try connection.request("POST", "/diff", json: #"{"old":[1,1],"new":[]}"#)
        _ = try connection.request("PUT", "/sessions/m", json: #"{"items":[1]}"#)
        let after = try connection.request("GET", "/metrics").text
        #expect(sample(after, #"livedelta_requests_total{route="/diff",status="200"}"#) == 3)
        #expect(sample(after, #"livedelta_requests_total{route="/diff",status="422"}"#) == 1)
        #expect(sample(after, #"livedelta_requests_total{route="/sessions/{id}",status="201"}"#) == 1)
        #expect(sample(after, #"livedelta_errors_total{code="duplicate_id"}"#) == 1)
        #expect(sample(after, #"livedelta_request_duration_seconds_count{route="/diff"}"#) == 4)
        // 3 bodies of 27 bytes and one of 22; the duplicate is refused before any diff.
        #expect(sample(after, #"livedelta_request_body_bytes_total{route="/diff"}"#) == Double(3 * 27 + 22))
        #expect(sample(after, "livedelta_diff_items_in_sum") == Double(3 * 5))
        #expect(sample(after, "livedelta_diff_changes_out_sum") == Double(3 * 3))
        #expect(sample(after, "livedelta_sessions_open") == 1)
        // The session holds the 13 bytes of the body its item came in, and their records.
        #expect(sample(after, "livedelta_session_bytes") == Double(13 + SessionFootprint.bytesPerBody + SessionFootprint.bytesPerItem))
        #expect(sample(after, "livedelta_sessions_evicted_total") == 0)
    }

    @Test func evictionsAreCounted() throws {
        let server = try ServerProcess(arguments: ["--max-sessions", "1"])
        let connection = try server.connection()
        _ = try connection.request("PUT", "/sessions/a", json: #"{"items":[]}"#)
        _ = try connection.request("PUT", "/sessions/b", json: #"{"items":[]}"#)
        let metrics = try connection.request("GET", "/metrics").text
        #expect(sample(metrics, "livedelta_sessions_evicted_total") == 1 && sample(metrics, "livedelta_sessions_open") == 1)
    }

    @Test func healthcheckExitsZeroAgainstARunningServerAndOneOtherwiseSayingWhy() throws {
        let server = try ServerProcess()
        let healthy = try run(["healthcheck", "--port", "\(server.port)"])
        #expect(healthy.status == 0 && healthy.output.contains("ok: /health answered 200"))
        server.stop()
        let dead = try run(["healthcheck", "--port", "\(server.port)", "--timeout", "1"])
        #expect(dead.status == 1 && dead.output.contains("connection refused"), "\(dead.output)")
        // A server that answers, but not 200: the status is said.
        let unready = try ServerProcess(arguments: ["--session-store", "redis://127.0.0.1:\(try Self.closedPort())", "--redis-timeout", "200"])
        let refused = try run(["healthcheck", "--port", "\(unready.port)", "--ready"])
        #expect(refused.status == 1 && refused.output.contains("/ready") && refused.output.contains("answered 503"), "\(refused.output)")
    }

    /// A Redis nobody listens on is said at start, right after "listening", and again while it
    /// lasts; not left for /ready alone to know.
    @Test func anUnreachableSessionStoreIsWarnedOfAtStart() throws {
        let port = try Self.closedPort()
        let server = try ServerProcess(arguments: ["--session-store", "redis://127.0.0.1:\(port)", "--redis-timeout", "200"])
        #expect(server.logShows("session store unreachable", "store=redis://127.0.0.1:\(port)/0"), "\(server.log)")
        let memory = try ServerProcess()
        _ = try memory.connection().request("GET", "/health")
        #expect(!memory.log.contains("unreachable"))
    }

    /// JSON logs: one object per line, numbers and booleans typed, so that a log pipeline reads
    /// `status` and `duration_ms` without a parser rule.
    @Test func jsonLogsAreOneTypedObjectPerLine() throws {
        let server = try ServerProcess(arguments: ["--log-format", "json", "--log-level", "info"])
        _ = try server.connection().request("POST", "/diff", json: #"{"old":[1],"new":[2]}"#)
        #expect(server.logShows("\"path\":\"/diff\""))
        #expect(server.stop() == 0)
        let lines = server.log.split(separator: "\n")
        #expect(lines.count >= 4)
        #expect(lines.allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") }, "\(server.log)")
        var request: JSONValue?
        for line in lines {
            let object = try JSONValue(parsing: String(line))
            #expect(object["time"]?.stringValue != nil && object["message"]?.stringValue != nil)
            if object["message"]?.stringValue == "request" { request = object }
            if object["message"]?.stringValue == "listening" { #expect(object["port"]?.int == Int(server.port)) }
            if object["message"]?.stringValue == "stopped" { #expect(object["drained"] == .bool(true)) }
        }
        let answered = try #require(request)
        #expect(answered["status"]?.int == 200 && answered["bytes_in"]?.int == 21)
        guard case .number = answered["duration_ms"] else {
            Issue.record("duration_ms is not a number: \(String(describing: answered["duration_ms"]))")
            return
        }
        #expect(answered["method"]?.stringValue == "POST")
    }

    /// Each limit names its flag and environment variable; a missing member is named alone; a
    /// repeated id in a session says how to allow it, and that advice works.
    @Test func refusalsSayWhichFlagAndTheirAdviceWorks() throws {
        let server = try ServerProcess(arguments: ["--max-items-per-request", "3", "--max-body-size", "200", "--max-session-items", "3"])
        let connection = try server.connection()
        let items = try connection.request("POST", "/diff", json: #"{"old":[1,2],"new":[3,4]}"#)
        #expect(items.status == 413 && items.text.contains("--max-items-per-request") && items.text.contains("LIVEDELTA_MAX_ITEMS_PER_REQUEST"))
        let body = try server.connection().request("POST", "/diff", json: "{\"old\":[\(String(repeating: "1,", count: 150))1],\"new\":[]}")
        #expect(body.status == 413 && body.text.contains("--max-body-size") && body.text.contains("LIVEDELTA_MAX_BODY_SIZE"))
        let missing = try server.connection().request("POST", "/diff", json: #"{"old":[1]}"#)
        #expect(missing.status == 422 && missing.text.contains(#"needs \"new\""#) && !missing.text.contains(#"\"old\" and"#), "\(missing)")
        let fresh = try server.connection()
        #expect(try fresh.request("PUT", "/sessions/r", json: #"{"items":[{"id":1},{"id":2}]}"#).status == 201)
        let full = try fresh.request("POST", "/sessions/r/append", json: #"{"items":[{"id":3},{"id":4}]}"#)
        #expect(full.status == 413 && full.text.contains("--max-session-items") && full.text.contains("LIVEDELTA_MAX_SESSION_ITEMS"))
        let repeated = try fresh.request("POST", "/sessions/r/update", json: #"{"items":[{"id":1},{"id":1}]}"#)
        #expect(repeated.errorCode == "duplicate_id" && repeated.text.contains("PUT") && repeated.text.contains(#"\"unique\": false"#))
        // Following it: the session made anew with the option takes the repeated ids.
        #expect(try fresh.request("PUT", "/sessions/r", json: #"{"items":[{"id":1}],"options":{"unique":false}}"#).status == 200)
        #expect(try fresh.request("POST", "/sessions/r/update", json: #"{"items":[{"id":1},{"id":1}],"options":{"unique":false}}"#).status == 200)
    }

    /// A refused operation is pointed at in the body (`/K` in a patch, `/operations/K` in keyed
    /// operations), and its message names the place in the session.
    @Test func aRefusedOperationIsPointedAtInTheBodyAndNamedInTheSession() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/p", json: #"{"items":[{"id":1},{"id":2},{"id":3}]}"#).status == 201)
        let patch = [("Content-Type", "application/json-patch+json")]
        let noID = try connection.request(
            "POST", "/sessions/p/changes", json: #"[{"op":"test","path":"/0/id","value":1},{"op":"replace","path":"/2","value":{"x":1}}]"#,
            headers: patch)
        #expect(noID.errorCode == "missing_id" && noID.json["error", "pointer"]?.stringValue == "/1", "\(noID)")
        #expect(noID.text.contains("the item at /2"), "\(noID)")
        let twice = try connection.request(
            "POST", "/sessions/p/changes",
            json: #"[{"op":"test","path":"/0/id","value":1},{"op":"test","path":"/1/id","value":2},{"op":"add","path":"/3","value":{"id":2}}]"#,
            headers: patch)
        #expect(twice.errorCode == "duplicate_id" && twice.json["error", "pointer"]?.stringValue == "/2", "\(twice)")
        #expect(twice.text.contains("at /1 and /3"), "\(twice)")
        let array = try connection.request(
            "POST", "/sessions/p/changes", json: #"[{"op":"test","path":"/0/id","value":1},{"op":"add","path":"/-","value":[1]}]"#, headers: patch)
        #expect(array.errorCode == "invalid_item" && array.json["error", "pointer"]?.stringValue == "/1" && array.text.contains("/3"), "\(array)")
        let keyed = try connection.request(
            "POST", "/sessions/p/changes", json: #"{"operations":[{"op":"remove","id":1},{"op":"insert","id":5,"before":null,"item":{"x":5}}]}"#)
        #expect(keyed.errorCode == "missing_id" && keyed.json["error", "pointer"]?.stringValue?.hasPrefix("/operations/1") == true, "\(keyed)")
        #expect(try connection.request("GET", "/sessions/p").json["version"]?.int == 0)
    }

    /// A port nothing listens on.
    static func closedPort() throws -> UInt16 {
        let probe = try ServerProcess()
        let port = probe.port
        probe.stop()
        return port
    }

    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
