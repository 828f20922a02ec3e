import ByteJSON
import Foundation
import LiveCollections
import TestSupport
import Testing

/// Each way a client could crash, wedge or exhaust the server, tried against the real binary:
/// the right status, a JSON error, and the process alive and serving afterwards.
@Suite struct HostileInputTests {
    static func expectServing(_ server: ServerProcess, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try server.connection().request("GET", "/health").status == 200, sourceLocation: sourceLocation)
    }

    /// Numbers of 22 or more significant digits, repeated, made the duplicate-id message trap.
    @Test(arguments: [
        #"{"old":[1234567890123456789012,1234567890123456789012],"new":[]}"#,
        #"{"old":[],"new":[{"id":-1.0000000000000000000001},{"id":-1.0000000000000000000001e0}]}"#,
        #"{"old":[NINES,NINES],"new":[]}"#,
        #"{"old":{"sections":[{"id":12345678901234567890123e40,"items":[]},{"id":12345678901234567890123e40,"items":[]}]},"new":{"sections":[]}}"#,
        #"{"old":[{"m":{"id":1234567890123456789012}},{"m":{"id":1234567890123456789012}}],"new":[],"options":{"idKey":"m.id"}}"#,
    ])
    func longDuplicateNumberIDsAreNamedNotTrapped(_ template: String) throws {
        let server = try ServerProcess()
        let body = template.replacingOccurrences(of: "NINES", with: String(repeating: "9", count: 400))
        let reply = try server.connection().request("POST", "/diff", json: body)
        #expect(reply.status == 422 && reply.errorCode == "duplicate_id", "\(reply)")
        let session = try server.connection().request("PUT", "/sessions/long", json: #"{"items":[1234567890123456789012,1234567890123456789012]}"#)
        #expect(session.status == 422 && session.errorCode == "duplicate_id")
        try Self.expectServing(server)
    }

    /// Nesting past the limit anywhere in a body, options and baseVersion included, is a 400;
    /// 16,000 levels in options used to overflow the stack.
    /// Paths are decoded one segment at a time: an encoded `/` stays in its segment (a session
    /// id cannot hold one, so it is refused as an id, never routed elsewhere), and a control
    /// character, `%00` among them, is a 400 rather than a path cut short. What proxies and
    /// WAF rules match on is what the server routes.
    @Test func encodedSlashesStayInTheirSegmentAndControlCharactersAre400() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/s1", json: #"{"items":[1]}"#).status == 201)
        let slash = try connection.request("PUT", "/sessions/s1%2Fupdate", json: #"{"items":[2]}"#)
        #expect(slash.status == 400 && slash.errorCode == "invalid_session_id", "\(slash)")
        #expect(try connection.request("POST", "/sessions/s1%2Fupdate", json: #"{"items":[2]}"#).status == 405)
        for path in ["/sessions/s1/update%00/events", "/sessions/s1%00/update", "/x%0A2026-01-01T00:00:00Z%20critical%20FORGED", "/sessions/s%1B"] {
            let refused = try connection.request("POST", path, json: #"{"items":[2]}"#)
            #expect(refused.status == 400 && refused.errorCode == "bad_request" && refused.text.contains("control character"), "\(path): \(refused)")
        }
        let broken = try connection.request("GET", "/sessions/s%zz")
        #expect(broken.status == 400 && broken.text.contains("percent-encoded"))
        // Nothing above reached the session; an encoded letter is still that letter.
        #expect(try connection.request("GET", "/sessions/s1").json["version"]?.int == 0)
        #expect(try connection.request("POST", "/%73essions/s%31/update", json: #"{"items":[3]}"#).status == 200)
        #expect(try connection.request("GET", "/sessions/s1/changes?wait=0&format=ke%79ed").status == 200)
        // One request, one line: the text log writes the path as sent, never a decoded line break.
        #expect(server.logShows("path=/x%0A2026"))
        #expect(!server.log.split(separator: "\n").contains { $0.hasPrefix("2026-01-01T00:00:00Z") })
    }

    @Test func nestingPastTheLimitIsA400Everywhere() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        for depth in [5_000, 16_000] {
            let deep = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let options = try connection.request("POST", "/diff", json: #"{"old":[],"new":[],"options":"# + deep + "}")
            #expect(options.status == 400 && options.errorCode == "malformed_json", "\(depth): \(options)")
            let base = try connection.request("POST", "/sessions/deep/update", json: #"{"items":[],"baseVersion":"# + deep + "}")
            #expect(base.status == 400 && base.errorCode == "malformed_json")
        }
        // The body's object, "old" and the item count: 512 levels in all is the limit.
        func items(_ levels: Int) -> String {
            let inner = String(repeating: "[", count: levels - 3) + String(repeating: "]", count: levels - 3)
            return #"{"old":[{"id":1,"x":"# + inner + #"}],"new":[]}"#
        }
        #expect(try connection.request("POST", "/diff", json: items(512)).status == 200)
        #expect(try connection.request("POST", "/diff", json: items(513)).status == 400)
        try Self.expectServing(server)
    }

    /// More connections than the limit, opened and closed, used to wedge the server for good.
    @Test func connectionsPastTheLimitAreRefusedAndTheServerGoesOn() throws {
        let server = try ServerProcess(arguments: ["--max-connections", "50", "--max-connections-per-client", "50"])
        var open = [HTTPConnection]()
        for _ in 0..<50 { open.append(try server.connection()) }
        try open[0].send(raw: Array("G".utf8))
        // The 51st is told why, in JSON, and closed.
        let refused = try server.connection().request("GET", "/health")
        #expect(refused.status == 503 && refused.errorCode == "too_many_connections" && refused.header("Retry-After") == "1")
        for _ in 0..<60 { _ = try? server.connection().send(raw: Array("G".utf8)) }
        open.removeAll()
        // Closed connections count out as the server notices them.
        #expect(eventually { (try? server.connection().request("GET", "/health").status) == 200 })
        let metrics = try server.connection().request("GET", "/metrics").text
        #expect(metrics.contains("livedelta_errors_total{code=\"too_many_connections\"}"), "\(metrics)")
        #expect(server.stop() == 0)
    }

    /// One address may hold only so many connections; another address is served meanwhile.
    @Test func oneClientCannotTakeEveryConnection() throws {
        let server = try ServerProcess(arguments: ["--max-connections-per-client", "5"])
        let held = try (0..<5).map { _ in try server.connection(from: "127.0.0.2") }
        let sixth = try server.connection(from: "127.0.0.2").request("GET", "/health")
        #expect(sixth.status == 429 && sixth.errorCode == "too_many_connections_from_client")
        #expect(try server.connection(from: "127.0.0.1").request("GET", "/health").status == 200)
        _ = held
    }

    /// A request head trickled in (slowloris) is cut off at the header timeout with a 408,
    /// however steadily its bytes come (each byte would reset an idle timeout).
    @Test func aSlowHeadIsCutOffWithA408() throws {
        let server = try ServerProcess(arguments: ["--header-timeout", "1"])
        let slow = try server.connection()
        let started = Date()
        for byte in Array("GET /health HTTP/1.1\r\nHost: x\r\n".utf8) where Date().timeIntervalSince(started) < 0.8 {
            try slow.send(raw: [byte])
            usleep(50_000)
        }
        let reply = try slow.readReply()
        #expect(reply.status == 408 && reply.errorCode == "request_timeout", "\(reply)")
        #expect(Date().timeIntervalSince(started) < 2.5)
        #expect(slow.isClosedByPeer())
        try Self.expectServing(server)
    }

    /// A body trickled in below the minimum rate, after the header timeout's grace, gets a 408.
    @Test func aSlowBodyIsCutOffWithA408() throws {
        let server = try ServerProcess(arguments: ["--header-timeout", "1", "--min-body-rate", "1000"])
        let slow = try server.connection()
        try slow.send(raw: Array("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{".utf8))
        let started = Date()
        while Date().timeIntervalSince(started) < 0.9 {
            try slow.send(raw: [0x20])
            usleep(100_000)
        }
        let reply = try slow.readReply()
        #expect(reply.status == 408 && reply.errorCode == "request_timeout", "\(reply)")
        #expect(Date().timeIntervalSince(started) < 3)
        try Self.expectServing(server)
    }

    /// Key lists cost one lookup a field, and are capped.
    @Test func keyListsAreCappedAndCheap() throws {
        let server = try ServerProcess()
        let keys = (0..<1_000).map { "\"k\($0)\"" }.joined(separator: ",")
        let fields = (0..<1_000).map { "\"f\($0)\":\($0)" }.joined(separator: ",")
        let items = (0..<300).map { "{\"id\":\($0),\(fields)}" }.joined(separator: ",")
        let reply = try server.connection().request(
            "POST", "/diff", json: #"{"options":{"ignoreKeys":["# + keys + #"]},"old":["# + items + #"],"new":["# + items + "]}")
        #expect(reply.status == 200)
        let tooMany = try server.connection().request("POST", "/diff", json: #"{"options":{"compareKeys":["# + keys + #","x"]},"old":[],"new":[]}"#)
        #expect(
            tooMany.status == 422 && tooMany.errorCode == "invalid_option" && tooMany.json["error", "pointer"]?.stringValue == "/options/compareKeys")
    }

    @Test func itemsPastTheRequestLimitAre413() throws {
        let server = try ServerProcess(arguments: ["--max-items-per-request", "100"])
        let items = (0..<60).map(String.init).joined(separator: ",")
        let reply = try server.connection().request("POST", "/diff", json: "{\"old\":[\(items)],\"new\":[\(items)]}")
        #expect(reply.status == 413 && reply.errorCode == "too_many_items")
        #expect(try server.connection().request("POST", "/diff", json: "{\"old\":[\(items)],\"new\":[]}").status == 200)
    }

    /// A client that sends its whole body before reading (urllib, fetch, a raw socket) sees
    /// the 413, rather than a reset connection.
    @Test func aClientThatSendsFirstReadsTheRefusal() throws {
        let server = try ServerProcess(arguments: ["--max-body-size", "1000"])
        let body = "{\"old\":[" + String(repeating: "1,", count: 200_000) + "1],\"new\":[]}"
        let connection = try server.connection()
        try connection.send(
            raw: Array("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
        let reply = try connection.readReply()
        #expect(reply.status == 413 && reply.errorCode == "body_too_large")
        try Self.expectServing(server)
    }

    /// Framing that a proxy and the server could read two ways is refused, in JSON.
    @Test(arguments: [
        ("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 21\r\nContent-Length: 5\r\n\r\n", 400, "bad_request"),
        ("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length : 21\r\n\r\n", 400, "bad_request"),
        ("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "unsupported_transfer_coding"),
        ("POST /diff HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 21\r\n\r\n", 400, "bad_request"),
        ("GET /health HTTP/1.1\r\n\r\n", 400, "bad_request"),
        ("GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "bad_request"),
        // A NUL or another control byte in the method or a header value: not read as its end.
        ("GE\u{0}T /health HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"),
        ("GET\u{0} /health HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"),
        ("G\u{1}T /health HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"),
        ("GET /health HTTP/1.1\r\nHost: x\r\nX-Note: a\u{0}b\r\n\r\n", 400, "bad_request"),
        ("GET /health HTTP/1.1\r\nX-Note: a\u{0}b\r\nHost: x\r\n\r\n", 400, "bad_request"),
        ("GET /health HTTP/1.1\nHost: x\nX-Note: a\u{0}b\n\n", 400, "bad_request"),
        ("GET /health HTTP/1.1\r\nHost: x\r\nX-Note: a\u{1B}b\r\n\r\n", 400, "bad_request"),
        ("GET /" + String(repeating: "a", count: 5_000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
        // Past the 8 KiB default, within the connection's memory: the server's own answer.
        (
            "GET /health HTTP/1.1\r\nHost: x\r\n" + (0..<10).map { "X-\($0): " + String(repeating: "v", count: 1_000) + "\r\n" }.joined() + "\r\n",
            431, "headers_too_large"
        ),
    ])
    func ambiguousFramingIsRefusedInJSON(_ head: String, _ status: Int, _ code: String) throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        try connection.send(raw: Array((head + #"{"old":[1],"new":[2]}"#).utf8))
        let reply = try connection.readReply()
        #expect(reply.status == status && reply.errorCode == code && reply.header("Content-Type") == "application/json", "\(reply)")
        try Self.expectServing(server)
    }

    /// The head's limit is a flag: a larger one lets a larger head in (a cookie-laden browser),
    /// and the default still takes a head just under it, whether of a few long fields or of
    /// many short ones.
    @Test func theHeadLimitIsAFlag() throws {
        func head(_ fields: Int, of length: Int) -> [UInt8] {
            let lines = (0..<fields).map { "X-\($0): " + String(repeating: "v", count: length) + "\r\n" }.joined()
            return Array(("GET /health HTTP/1.1\r\nHost: x\r\n" + lines + "\r\n").utf8)
        }
        let standard = try ServerProcess()
        for bytes in [head(7, of: 1_100), head(100, of: 20)] {
            #expect(bytes.count < 8 << 10)
            let connection = try standard.connection()
            try connection.send(raw: bytes)
            #expect(try connection.readReply().status == 200)
        }
        let larger = try ServerProcess(arguments: ["--max-header-bytes", "32768"])
        let connection = try larger.connection()
        try connection.send(raw: head(20, of: 1_000))
        #expect(try connection.readReply().status == 200)
        try connection.send(raw: head(34, of: 1_000))
        let refused = try connection.readReply()
        #expect(refused.status == 431 && refused.errorCode == "headers_too_large" && refused.text.contains("32768"), "\(refused)")
    }

    /// What is allowed around those bytes still passes: white space around a value, a tab and
    /// UTF-8 inside one, an empty value, bare line feeds, two spaces after the method.
    @Test func fieldsWithinTheRulesAreServed() throws {
        let server = try ServerProcess()
        for head in [
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Note:   spaced   \r\nX-Empty:\r\nX-Text: a\tb\u{E9}\r\n\r\n",
            "GET /health HTTP/1.1\nHost: x\nX-Note: v\n\n", "GET  /health HTTP/1.1\r\nHost: x\r\n\r\n",
        ] {
            let connection = try server.connection()
            try connection.send(raw: Array(head.utf8))
            #expect(try connection.readReply().status == 200, "\(head)")
        }
    }

    /// HEAD on an event stream answers its head alone: the next answer on the connection is
    /// read whole. A body in a content coding is a 415 naming it, not read as JSON.
    @Test func headOnAStreamSendsNoBodyAndCodedBodiesAre415() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/h", json: #"{"items":[1]}"#).status == 201)
        for path in ["/sessions/h/events", "/sessions/h/changes?wait=0", "/sessions/h"] {
            let head = try connection.request("HEAD", path)
            #expect(head.status == 200 && head.body.isEmpty, "\(path): \(head)")
            #expect(try connection.request("GET", "/health").json["status"]?.stringValue == "ok", "after HEAD \(path)")
        }
        for coding in ["gzip", "identity, br"] {
            let coded = try connection.request(
                "POST", "/diff", body: Array(#"{"old":[1],"new":[2]}"#.utf8),
                headers: [("Content-Type", "application/json"), ("Content-Encoding", coding)])
            #expect(coded.status == 415 && coded.errorCode == "unsupported_media_type" && coded.header("Accept-Encoding") == "identity", "\(coded)")
        }
        let plain = try connection.request(
            "POST", "/diff", body: Array(#"{"old":[1],"new":[2]}"#.utf8),
            headers: [("Content-Type", "application/json"), ("Content-Encoding", "identity")])
        #expect(plain.status == 200)
    }

    @Test(arguments: [
        (#"{"old":[1],"old":[2],"new":[]}"#, "/old"),
        (#"{"old":[{"id":1,"id":2}],"new":[]}"#, "/old/0/id"),
        (#"{"old":[],"new":[],"options":{"unique":false,"unique":true}}"#, "/options/unique"),
        (#"{"old":{"sections":[{"id":1,"items":[],"items":[1]}]},"new":{"sections":[]}}"#, "/old/sections/0/items"),
    ])
    func repeatedMembersAreRefused(_ body: String, _ pointer: String) throws {
        let server = try ServerProcess()
        let reply = try server.connection().request("POST", "/diff", json: body)
        #expect(reply.status == 422 && reply.errorCode == "duplicate_member" && reply.json["error", "pointer"]?.stringValue == pointer, "\(reply)")
    }

    /// Ids are compared by value: a string by its decoded text, whatever its escapes, as a
    /// number by its value; in a diff, a session, a keyed operation and a patch alike.
    @Test(arguments: StoreKind.allCases) func stringIDsAreComparedByTheirText(store: StoreKind) throws {
        let fixture = try Fixture(store)
        let connection = fixture.connection
        let diff = try connection.request("POST", "/diff", json: #"{"old":[{"id":"ab","v":1},"c"],"new":[{"id":"\u0061b","v":2},"\u0063"]}"#)
        #expect(try indexDelta(diff.json["delta"]) == IndexDelta(reloads: [IndexPair(source: 0, target: 0)]), "\(diff)")
        let sections = try connection.request(
            "POST", "/diff", json: #"{"old":{"sections":[{"id":"s","items":[]}]},"new":{"sections":[{"id":"\u0073","items":[]}]}}"#)
        #expect(sections.json["changeCount"]?.int == 0, "\(sections)")
        let twice = try connection.request("PUT", "/sessions/ids", json: #"{"items":[{"id":"a"},{"id":"\u0061"}]}"#)
        #expect(twice.status == 422 && twice.errorCode == "duplicate_id", "\(twice)")
        #expect(try connection.request("PUT", "/sessions/ids", json: #"{"items":[{"id":"\u0061","v":1}]}"#).status == 201)
        let updated = try connection.request(
            "POST", "/sessions/ids/changes", json: #"{"operations":[{"op":"update","id":"a","item":{"id":"a","v":2}}]}"#)
        #expect(updated.status == 200, "\(updated)")
        let inserted = try connection.request(
            "POST", "/sessions/ids/changes", json: #"{"operations":[{"op":"insert","id":"\u0061","item":{"id":"a"}}]}"#)
        #expect(inserted.status == 422 && inserted.errorCode == "duplicate_id", "\(inserted)")
        let patched = try connection.request(
            "POST", "/sessions/ids/changes", body: Array(#"[{"op":"add","path":"/-","value":{"id":"\u0061"}}]"#.utf8),
            headers: [("Content-Type", "application/json-patch+json")])
        #expect(patched.status == 422 && patched.errorCode == "duplicate_id", "\(patched)")
        let update = try connection.request("POST", "/sessions/ids/update", json: #"{"items":[{"id":"\u0061","v":2}]}"#)
        #expect(update.json["changeCount"]?.int == 0, "\(update)")
    }

    @Test func weakTagsNeverMatchAndDotIDsAreRefused() throws {
        let server = try ServerProcess()
        #expect(try server.connection().request("PUT", "/sessions/s", json: #"{"items":[1]}"#).status == 201)
        let weak = try server.connection().request(
            "POST", "/sessions/s/update", json: #"{"items":[2]}"#, headers: [("Content-Type", "application/json"), ("If-Match", "W/\"0\"")])
        #expect(weak.status == 412 && weak.errorCode == "version_mismatch")
        #expect(try server.connection().request("GET", "/sessions/s").json["version"]?.int == 0)
        // A body that would be refused anyway is refused for what is wrong with it.
        for (body, code) in [(#"{"items":[2],"options":{"ignoreKeys":[true]}}"#, "invalid_option"), (#"{"items":[[2]]}"#, "invalid_item")] {
            let both = try server.connection().request(
                "POST", "/sessions/s/update", json: body, headers: [("Content-Type", "application/json"), ("If-Match", "W/\"0\"")])
            #expect(both.status == 422 && both.errorCode == code, "\(both)")
        }
        for id in [".", ".."] {
            let reply = try server.connection().request("PUT", "/sessions/\(id)", json: #"{"items":[1]}"#)
            #expect(reply.status == 400 && reply.errorCode == "invalid_session_id", "\(id): \(reply)")
        }
        // A segment that begins with a combining scalar (a skin tone, U+1F3FB) still splits
        // from the slash before it: the id is refused, not the path unknown.
        for path in ["/sessions/%F0%9F%8F%BB", "/live/%F0%9F%8F%BB", "/sessions/%CC%81/events"] {
            let reply = try server.connection().request("GET", path)
            #expect(reply.status == 400 && reply.errorCode == "invalid_session_id", "\(path): \(reply)")
        }
    }

    /// Two different lone surrogates must not both read as U+FFFD in a message.
    @Test func loneSurrogatesAreShownEscaped() throws {
        let server = try ServerProcess()
        let reply = try server.connection().request("POST", "/diff", json: #"{"old":[{"id":"a\ud800"},{"id":"a\ud800"}],"new":[]}"#)
        #expect(reply.status == 422 && reply.json["error", "id"]?.stringValue == #""a\ud800""#, "\(reply)")
    }

    /// Flag values that do not fit stop start-up with a message instead of trapping or wrapping.
    @Test(arguments: [
        ["--max-body-size", "99999999999"], ["--connection-timeout", "5000000000"], ["--threads", "0"], ["--max-connections", "0"],
        ["--max-connections-per-client", "50000"], ["--header-timeout", "0"], ["--max-items-per-request", "0"], ["--max-session-bytes", "0"],
    ])
    func outOfRangeFlagsStopStartUp(_ flags: [String]) throws {
        let (status, output) = try Self.start(flags)
        #expect(status != 0 && output.contains("must be"), "\(flags): \(output)")
    }

    /// An environment variable that does not read as its flag's type stops start-up too,
    /// rather than leaving the default in force unnoticed.
    @Test(arguments: [("LIVEDELTA_PORT", "99999"), ("LIVEDELTA_MAX_BODY_SIZE", "32MB"), ("LIVEDELTA_LOG_FORMAT", "xml")])
    func unreadableEnvironmentStopsStartUp(_ name: String, _ value: String) throws {
        let (status, output) = try Self.start([], environment: [name: value])
        #expect(status != 0 && output.contains(name), "\(output)")
    }

    static func start(_ flags: [String], environment: [String: String] = [:]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = ["--port", "0"] + flags
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        try process.run()
        // Read before waiting: a child that wrote more than the pipe holds would wait for us.
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
