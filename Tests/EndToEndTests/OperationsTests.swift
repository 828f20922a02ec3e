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

    @Test func healthcheckExitsZeroAgainstARunningServerAndOneOtherwise() throws {
        let server = try ServerProcess()
        #expect(try run(["healthcheck", "--port", "\(server.port)"]) == 0)
        server.stop()
        #expect(try run(["healthcheck", "--port", "\(server.port)", "--timeout", "1"]) == 1)
    }

    func run(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
