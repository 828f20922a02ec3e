import Foundation
import TestSupport
import Testing

/// Browsers on other origins (`--cors-origins`), against the real binary: off by default;
/// preflights answered on every route with its methods; listed origins may read answers and
/// the headers they need, credentials only on the cookie routes and never with `*`; an origin
/// not listed gets no CORS header and otherwise the same answer.
@Suite struct CORSTests {
    static func corsHeaders(_ reply: Reply) -> [String] {
        reply.headers.map(\.name).filter { $0.lowercased().hasPrefix("access-control-") }.sorted()
    }

    static func preflight(_ connection: HTTPConnection, _ path: String, origin: String, method: String) throws -> Reply {
        try connection.request(
            "OPTIONS", path,
            headers: [("Origin", origin), ("Access-Control-Request-Method", method), ("Access-Control-Request-Headers", "authorization")])
    }

    @Test func offByDefaultNoAnswerCarriesCORSHeadersButOPTIONSIsAnswered() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        let health = try connection.request("GET", "/health", headers: [("Origin", "http://a.test")])
        #expect(health.status == 200 && Self.corsHeaders(health).isEmpty && health.header("Vary") == nil)
        let options = try Self.preflight(connection, "/diff", origin: "http://a.test", method: "POST")
        #expect(options.status == 204 && options.header("Allow") == "POST, OPTIONS" && Self.corsHeaders(options).isEmpty)
    }

    @Test func listedOriginsGetPreflightsAndReadableAnswers() throws {
        let server = try ServerProcess(arguments: ["--cors-origins", "http://a.test, http://b.test:8000"])
        let connection = try server.connection()
        let diff = try Self.preflight(connection, "/diff", origin: "http://b.test:8000", method: "POST")
        #expect(diff.status == 204 && diff.header("Access-Control-Allow-Origin") == "http://b.test:8000")
        #expect(diff.header("Access-Control-Allow-Methods") == "POST, OPTIONS")
        #expect(diff.header("Access-Control-Allow-Headers") == "Content-Type, Authorization, If-Match, Idempotency-Key, Last-Event-ID, X-Request-Id")
        #expect(diff.header("Access-Control-Allow-Credentials") == nil && diff.header("Access-Control-Max-Age") == "600")
        // The routes that take the token from a cookie (the live ones) allow credentials.
        let events = try Self.preflight(connection, "/sessions/feed/events", origin: "http://a.test", method: "GET")
        #expect(events.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS" && events.header("Access-Control-Allow-Credentials") == "true")
        let session = try Self.preflight(connection, "/sessions/feed", origin: "http://a.test", method: "PUT")
        #expect(session.header("Access-Control-Allow-Methods") == "GET, HEAD, PUT, DELETE, OPTIONS")

        let put = try connection.request(
            "PUT", "/sessions/feed", body: Array(#"{"items":[1]}"#.utf8),
            headers: [("Content-Type", "application/json"), ("Origin", "http://a.test")])
        #expect(put.status == 201 && put.header("Access-Control-Allow-Origin") == "http://a.test")
        #expect(
            put.header("Access-Control-Expose-Headers") == "ETag, Location, Retry-After, Idempotent-Replayed, X-Request-Id"
                && put.header("Vary") == "Origin")
        // Errors too, so that a page can read what went wrong.
        let missing = try connection.request("GET", "/sessions/nobody", headers: [("Origin", "http://a.test")])
        #expect(missing.status == 404 && missing.header("Access-Control-Allow-Origin") == "http://a.test")
    }

    @Test func anOriginNotListedGetsNoCORSHeadersAndTheSameAnswer() throws {
        let server = try ServerProcess(arguments: ["--cors-origins", "http://a.test"])
        let connection = try server.connection()
        let body = Array(#"{"old":[1,2],"new":[2,1]}"#.utf8)
        let plain = try connection.request("POST", "/diff", body: body)
        for origin in ["http://c.test", "http://a.test.evil", "https://a.test", "null"] {
            let other = try connection.request("POST", "/diff", body: body, headers: [("Content-Type", "application/json"), ("Origin", origin)])
            #expect(Self.corsHeaders(other).isEmpty, "\(origin)")
            #expect(other.status == plain.status && other.body == plain.body && other.header("Vary") == "Origin")
            let preflight = try Self.preflight(connection, "/diff", origin: origin, method: "POST")
            #expect(preflight.status == 204 && Self.corsHeaders(preflight).isEmpty, "\(origin)")
        }
    }

    @Test func anyOriginNeverWithCredentials() throws {
        let server = try ServerProcess(arguments: ["--cors-origins", "*"])
        let connection = try server.connection()
        let events = try Self.preflight(connection, "/sessions/feed/events", origin: "http://anywhere.test", method: "GET")
        #expect(events.header("Access-Control-Allow-Origin") == "*" && events.header("Access-Control-Allow-Credentials") == nil)
        let health = try connection.request("GET", "/health", headers: [("Origin", "http://anywhere.test")])
        #expect(health.header("Access-Control-Allow-Origin") == "*" && health.header("Vary") == nil)
    }

    @Test(arguments: ["http://a.test/", "a.test", "*,http://a.test", "ftp://a.test", "http://a.test/path"])
    func anOriginThatIsNotOneStopsTheStart(value: String) throws {
        let (status, output) = try OperationsTests().run(["--cors-origins", value])
        #expect(status != 0 && output.contains("--cors-origins"), "\(output)")
    }
}
