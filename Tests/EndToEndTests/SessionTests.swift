import ByteJSON
import Dispatch
import Foundation
import LiveCollections
import Synchronization
import TestSupport
import Testing

/// A flat session's items as test things (`{"id": n, "content": m}`).
func things(_ value: JSONValue?) -> [Thing] {
    (value?.array ?? []).map { Thing(id: $0["id"]?.int ?? -1, content: $0["content"]?.int ?? 0) }
}

/// Where a test's server keeps its sessions: every session test runs against both stores.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, redis, cluster
    var testDescription: String { rawValue }
}

/// A server with the store asked for (and, for Redis, a real redis-server of its own; for a
/// cluster, six).
struct Fixture {
    let redis: RedisProcess?
    let cluster: RedisClusterProcess?
    let server: ServerProcess
    let connection: HTTPConnection

    init(_ store: StoreKind, arguments: [String] = []) throws {
        redis = store == .redis ? try RedisProcess() : nil
        cluster = store == .cluster ? try RedisClusterProcess() : nil
        let url = redis?.url ?? cluster?.url
        server = try ServerProcess(arguments: arguments + (url.map { ["--session-store", $0] } ?? []))
        connection = try server.connection()
    }
}

@Suite(.serialized) struct SessionTests {
    func items(_ things: [Thing], extra: String = "") -> String { "{\"items\":\(json(things))\(extra)}" }

    @Test(arguments: StoreKind.allCases) func aClientKeepsASessionAndGetsDeltasFromWhatItHad(store: StoreKind) throws {
        let fixture = try Fixture(store)
        let connection = fixture.connection
        let first = [Thing(id: 1), Thing(id: 2), Thing(id: 3)]
        let created = try connection.request("POST", "/sessions", json: items(first))
        #expect(created.status == 201)
        let id = try #require(created.json["id"]?.stringValue)
        #expect(created.header("Location") == "/sessions/\(id)" && created.header("ETag") == "\"0\"")
        #expect(created.json["version"]?.int == 0 && created.json["count"]?.int == 3)

        let second = [Thing(id: 3), Thing(id: 1, content: 5), Thing(id: 4)]
        let updated = try connection.request("POST", "/sessions/\(id)/update", json: items(second))
        #expect(updated.status == 200 && updated.json["version"]?.int == 1 && updated.json["baseVersion"]?.int == 0)
        #expect(updated.header("ETag") == "\"1\"")
        #expect(try indexDelta(updated.json["delta"]).replay(old: first, new: second) == second)

        let dryRun = try connection.request("POST", "/sessions/\(id)/delta", json: items([Thing(id: 4)]))
        #expect(dryRun.status == 200 && dryRun.json["version"]?.int == 1 && dryRun.json["baseVersion"]?.int == 1)
        #expect(try indexDelta(dryRun.json["delta"]).deletions == [0, 1])

        let appended = try connection.request("POST", "/sessions/\(id)/append", json: items([Thing(id: 7), Thing(id: 8)]))
        #expect(appended.json["version"]?.int == 2 && appended.json["animation"]?.stringValue == "preciseAnimations")
        #expect(try indexDelta(appended.json["delta"]) == IndexDelta(insertions: [3, 4]))

        let shown = try connection.request("GET", "/sessions/\(id)")
        #expect(shown.status == 200 && shown.header("ETag") == "\"2\"" && shown.json["version"]?.int == 2)
        #expect(things(shown.json["items"]) == second + [Thing(id: 7), Thing(id: 8)])
        #expect(shown.json["options", "idKey"]?.stringValue == "id")

        #expect(try connection.request("DELETE", "/sessions/\(id)").status == 204)
        #expect(try connection.request("GET", "/sessions/\(id)").status == 404)
    }

    @Test(arguments: StoreKind.allCases) func anUpdateToAnUnknownIDCreatesItFromEmpty(store: StoreKind) throws {
        let fixture = try Fixture(store)
        let connection = fixture.connection
        let reply = try connection.request("POST", "/sessions/fresh-1/update", json: items([Thing(id: 1), Thing(id: 2)]))
        #expect(reply.status == 201 && reply.header("Location") == "/sessions/fresh-1")
        #expect(try indexDelta(reply.json["delta"]) == IndexDelta(insertions: [0, 1]))
        #expect(reply.json["version"]?.int == 1 && reply.json["baseVersion"]?.int == 0)
        // Unless the request names a version.
        let named = try connection.request(
            "POST", "/sessions/fresh-2/update", json: items([Thing(id: 1)]), headers: [("Content-Type", "application/json"), ("If-Match", "\"0\"")])
        #expect(named.status == 412 && named.errorCode == "version_mismatch" && named.json["error", "currentVersion"] == .null)
        #expect(try connection.request("GET", "/sessions/fresh-2").status == 404)
    }

    @Test(arguments: StoreKind.allCases) func ifMatchAndBaseVersionGuardTheBase(store: StoreKind) throws {
        let fixture = try Fixture(store)
        let connection = fixture.connection
        #expect(try connection.request("PUT", "/sessions/guarded", json: items([Thing(id: 1)])).status == 201)
        let jsonHeaders = { (version: String) in [("Content-Type", "application/json"), ("If-Match", version)] }
        #expect(try connection.request("POST", "/sessions/guarded/update", json: items([Thing(id: 2)]), headers: jsonHeaders("\"0\"")).status == 200)
        let stale = try connection.request("POST", "/sessions/guarded/update", json: items([Thing(id: 3)]), headers: jsonHeaders("\"0\""))
        #expect(stale.status == 412 && stale.json["error", "currentVersion"]?.int == 1 && stale.header("ETag") == "\"1\"")
        let staleBody = try connection.request("POST", "/sessions/guarded/append", json: items([Thing(id: 3)], extra: ",\"baseVersion\":0"))
        #expect(staleBody.status == 412)
        #expect(try connection.request("POST", "/sessions/guarded/append", json: items([Thing(id: 3)], extra: ",\"baseVersion\":1")).status == 200)
        let stillThere = try connection.request("DELETE", "/sessions/guarded", headers: [("If-Match", "\"1\"")])
        #expect(stillThere.status == 412)
        #expect(try connection.request("DELETE", "/sessions/guarded", headers: [("If-Match", "\"2\"")]).status == 204)
        #expect(try connection.request("DELETE", "/sessions/guarded", headers: [("If-Match", "\"2\"")]).status == 412)
        #expect(try connection.request("DELETE", "/sessions/guarded").status == 404)
    }

    /// `If-Match` takes a list of entity tags (RFC 9110): any listed version that is the current
    /// one passes, on every route that takes it, `/delta` included; weak tags never match.
    @Test(arguments: StoreKind.allCases) func ifMatchTakesAListOfTags(store: StoreKind) throws {
        let fixture = try Fixture(store)
        let connection = fixture.connection
        let jsonHeaders = { (tags: String) in [("Content-Type", "application/json"), ("If-Match", tags)] }
        #expect(try connection.request("PUT", "/sessions/listed", json: items([Thing(id: 1)])).status == 201)
        let listed = try connection.request("POST", "/sessions/listed/update", json: items([Thing(id: 2)]), headers: jsonHeaders(#""5", "0""#))
        #expect(listed.status == 200 && listed.json["version"]?.int == 1)
        let delta = try connection.request("POST", "/sessions/listed/delta", json: items([Thing(id: 3)]), headers: jsonHeaders(#""0", W/"1""#))
        #expect(delta.status == 412 && delta.json["error", "currentVersion"]?.int == 1)
        #expect(
            try connection.request("POST", "/sessions/listed/delta", json: items([Thing(id: 3)]), headers: jsonHeaders(#""0","1""#)).status == 200)
        let bad = try connection.request("POST", "/sessions/listed/update", json: items([]), headers: jsonHeaders(#""1", x"#))
        #expect(bad.status == 400 && bad.errorCode == "invalid_if_match")
        #expect(try connection.request("DELETE", "/sessions/listed", headers: [("If-Match", #""7", "8""#)]).status == 412)
        #expect(try connection.request("DELETE", "/sessions/listed", headers: [("If-Match", #""7", "1""#)]).status == 204)
    }

    /// Creating or replacing takes no condition, and says so rather than ignoring one.
    @Test func putAndPostTakeNoCondition() throws {
        let fixture = try Fixture(.memory)
        let connection = fixture.connection
        let withTag = try connection.request(
            "PUT", "/sessions/plain", json: items([Thing(id: 1)]), headers: [("Content-Type", "application/json"), ("If-Match", "\"0\"")])
        #expect(withTag.status == 400 && withTag.errorCode == "invalid_if_match")
        let withBase = try connection.request("POST", "/sessions", json: items([Thing(id: 1)], extra: ",\"baseVersion\":0"))
        #expect(withBase.status == 422 && withBase.errorCode == "invalid_shape" && withBase.json["error", "pointer"]?.stringValue == "/baseVersion")
        #expect(try connection.request("GET", "/sessions/plain").status == 404)
    }

    /// The method is checked before anything in the path: a path the API has, with a method it
    /// does not take, is a 405 whatever the id; HEAD is answered where GET is.
    @Test func theMethodIsCheckedBeforeTheID() throws {
        let fixture = try Fixture(.memory)
        let connection = fixture.connection
        for path in ["/sessions/abc", "/sessions/null%2Cnull", "/sessions/%2E%2E"] {
            let answer = try connection.request("PATCH", path)
            #expect(answer.status == 405 && answer.header("Allow") == "GET, HEAD, PUT, DELETE, OPTIONS", "\(path): \(answer)")
        }
        let wrong = try connection.request("GET", "/sessions/x/update")
        #expect(wrong.status == 405 && wrong.header("Allow") == "POST, OPTIONS")
        #expect(try connection.request("GET", "/sessions/null%2Cnull").errorCode == "invalid_session_id")
        #expect(try connection.request("HEAD", "/health").status == 200)
    }

    @Test(arguments: StoreKind.allCases) func everyRefusalLeavesTheSessionAsItWas(store: StoreKind) throws {
        let fixture = try Fixture(store)
        let connection = fixture.connection
        let first = [Thing(id: 1), Thing(id: 2)]
        #expect(try connection.request("PUT", "/sessions/steady", json: items(first)).status == 201)
        let refusals: [(String, String, [(String, String)], Int)] = [
            ("/sessions/steady/update", "{\"items\": [1, 2,", [], 400),
            ("/sessions/steady/update", #"{"items": [{"id": 1}, {"id": 1}]}"#, [], 422),
            ("/sessions/steady/update", #"{"items": [{"x": 1}]}"#, [], 422),
            ("/sessions/steady/update", #"{"sections": []}"#, [], 422),
            ("/sessions/steady/update", #"{"items": [], "sections": []}"#, [], 422),
            ("/sessions/steady/update", #"{"items": [], "options": {"idKey": "other"}}"#, [], 422),
            ("/sessions/steady/update", #"{"items": [], "baseVersion": -1}"#, [], 422),
            ("/sessions/steady/update", #"{"items": []}"#, [("If-Match", "\"9\"")], 412),
            ("/sessions/steady/update", #"{"items": []}"#, [("If-Match", "nine")], 400),
            ("/sessions/steady/append", #"{"items": [{"id": 2}]}"#, [], 422),
            ("/sessions/steady/append", #"{"items": [{"id": 5}]}"#, [("If-Match", "\"3\"")], 412),
        ]
        for (path, body, headers, status) in refusals {
            let reply = try connection.request("POST", path, json: body, headers: [("Content-Type", "application/json")] + headers)
            #expect(reply.status == status, "\(path) \(body): \(reply)")
            #expect(reply.json["error", "code"] != nil)
            let shown = try connection.request("GET", "/sessions/steady")
            #expect(shown.json["version"]?.int == 0 && things(shown.json["items"]) == first, "\(body)")
        }
        #expect(try connection.request("POST", "/sessions/steady/update", json: "{}", headers: [("Content-Type", "text/plain")]).status == 415)
        #expect(try connection.request("GET", "/sessions/not%20valid").status == 400)
        #expect(try connection.request("GET", "/sessions/" + String(repeating: "x", count: 129)).status == 400)
        #expect(try connection.request("PATCH", "/sessions/steady").status == 405)
    }

    @Test(arguments: StoreKind.allCases) func sectionedSessionsTakeSectionsAndWholeSectionAppends(store: StoreKind) throws {
        let fixture = try Fixture(store)
        let connection = fixture.connection
        let create = #"{"sections": [{"id": "a", "title": "A", "items": [{"id": 1}, {"id": 2}]}]}"#
        #expect(try connection.request("PUT", "/sessions/shelves", json: create).status == 201)
        let update = try connection.request(
            "POST", "/sessions/shelves/update",
            json: #"{"sections": [{"id": "b", "items": [{"id": 2}]}, {"id": "a", "title": "A", "items": [{"id": 1}]}]}"#)
        let zero = try JSONValue(parsing: "[0]"), two = try JSONValue(parsing: "[2]")
        #expect(update.status == 200 && update.json["sectionDelta", "insertions"] == zero)
        let append = try connection.request("POST", "/sessions/shelves/append", json: #"{"sections": [{"id": "c", "items": [{"id": 9}]}]}"#)
        #expect(append.status == 200 && append.json["sectionDelta", "insertions"] == two)
        let shown = try connection.request("GET", "/sessions/shelves")
        #expect(shown.json["sectionCount"]?.int == 3 && shown.json["count"]?.int == 3)
        #expect(shown.json["sections"]?.array?.map { $0["id"]?.stringValue } == ["b", "a", "c"])
        #expect(try connection.request("POST", "/sessions/shelves/update", json: #"{"items": []}"#).status == 422)
    }

    @Test(arguments: StoreKind.allCases) func nonUniqueAppendsCountOnFromTheOccurrencesHeld(store: StoreKind) throws {
        let fixture = try Fixture(store)
        let connection = fixture.connection
        #expect(try connection.request("PUT", "/sessions/repeats", json: #"{"items": ["A", "B"], "options": {"unique": false}}"#).status == 201)
        #expect(try connection.request("POST", "/sessions/repeats/append", json: #"{"items": ["A"]}"#).status == 200)
        let update = try connection.request("POST", "/sessions/repeats/update", json: #"{"items": ["A", "A"]}"#)
        #expect(try indexDelta(update.json["delta"]) == IndexDelta(deletions: [1]))
    }

    /// 8 clients post 200 updates each to one session; sorted by version, the deltas chain from
    /// version 0 to exactly what GET shows, with no version skipped or repeated.
    @Test(arguments: StoreKind.allCases) func concurrentUpdatesChainWithoutGapsOrRepeats(store: StoreKind) throws {
        let fixture = try Fixture(store)
        let connection = fixture.connection
        #expect(try connection.request("PUT", "/sessions/busy", json: items([])).status == 201)
        struct Answer: Sendable {
            var version: Int
            var baseVersion: Int
            var delta: IndexDelta
            var posted: [Thing]
        }
        let answers = Mutex<[Answer]>([])
        let failures = Mutex<[String]>([])
        let port = fixture.server.port
        DispatchQueue.concurrentPerform(iterations: 8) { client in
            do {
                let connection = try HTTPConnection(port: port)
                var rng = SystemRandomNumberGenerator()
                for step in 0..<200 {
                    let posted = (0..<40).filter { _ in Bool.random(using: &rng) }.shuffled(using: &rng).map {
                        Thing(id: $0, content: (client + step) % 3)
                    }
                    let reply = try connection.request("POST", "/sessions/busy/update", json: "{\"items\":\(json(posted))}")
                    guard reply.status == 200, let version = reply.json["version"]?.int, let base = reply.json["baseVersion"]?.int else {
                        failures.withLock { $0.append("\(reply)") }
                        continue
                    }
                    let delta = try indexDelta(reply.json["delta"])
                    answers.withLock { $0.append(Answer(version: version, baseVersion: base, delta: delta, posted: posted)) }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        let ordered = answers.withLock { $0 }.sorted { $0.version < $1.version }
        #expect(ordered.map(\.version) == Array(1...1_600))
        var state: [Thing] = []
        for answer in ordered {
            #expect(answer.baseVersion == answer.version - 1)
            state = try answer.delta.replay(old: state, new: answer.posted)
            #expect(state == answer.posted)
        }
        let final = try connection.request("GET", "/sessions/busy")
        #expect(final.json["version"]?.int == 1_600 && things(final.json["items"]) == state)
    }
}

@Suite struct SessionLimitTests {
    @Test(arguments: StoreKind.allCases) func idleSessionsExpire(store: StoreKind) throws {
        let fixture = try Fixture(store, arguments: ["--session-idle-timeout", "1"])
        let connection = fixture.connection
        #expect(try connection.request("PUT", "/sessions/brief", json: #"{"items": []}"#).status == 201)
        #expect(try connection.request("GET", "/sessions/brief").status == 200)
        // The condition is the session's idle time itself, and any request about the session
        // would refresh it, so the test watches a clock instead: the server touched the session
        // before it answered, so once a second has passed since the answer arrived, the session
        // has been idle for longer than its timeout (a loaded machine only lengthens that).
        let answered = ContinuousClock.now
        while ContinuousClock.now < answered + .milliseconds(1_100) { usleep(10_000) }
        #expect(try connection.request("GET", "/sessions/brief").status == 404)
        #expect(try connection.request("POST", "/sessions/brief/update", json: #"{"items": [], "baseVersion": 0}"#).status == 412)
    }

    /// The memory store's own bound (Redis's is its maxmemory policy).
    @Test func whenFullTheLeastRecentlyUsedSessionIsEvicted() throws {
        let server = try ServerProcess(arguments: ["--max-sessions", "2"])
        let connection = try server.connection()
        for id in ["one", "two"] { #expect(try connection.request("PUT", "/sessions/\(id)", json: #"{"items": []}"#).status == 201) }
        #expect(try connection.request("GET", "/sessions/one").status == 200)  // "two" is now the least recently used
        #expect(try connection.request("PUT", "/sessions/three", json: #"{"items": []}"#).status == 201)
        #expect(try connection.request("GET", "/sessions/two").status == 404)
        #expect(try connection.request("GET", "/sessions/one").status == 200)
        #expect(server.logShows("session evicted", "session=two"))
    }

    @Test func sessionsHoldAtMostTheConfiguredBytesWhateverTheirItemCount() throws {
        // One item in a 60 KB body: a session keeps the body its items came in.
        let padded = #"{"items": [1]"# + String(repeating: " ", count: 60_000) + "}"
        let server = try ServerProcess(arguments: ["--max-session-bytes", "100000"])
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/one", json: padded).status == 201)
        #expect(try connection.request("PUT", "/sessions/two", json: padded).status == 201)
        #expect(try connection.request("GET", "/sessions/one").status == 404)
        #expect(server.logShows("session evicted", "session=one"))
        let tooLarge = try connection.request("POST", "/sessions/two/append", json: padded)
        #expect(tooLarge.status == 413 && tooLarge.errorCode == "session_too_large")
        let shown = try connection.request("GET", "/sessions/two")
        #expect(shown.json["version"]?.int == 0 && shown.json["count"]?.int == 1)
    }

    @Test(arguments: StoreKind.allCases) func aSessionHoldsAtMostTheConfiguredItems(store: StoreKind) throws {
        let fixture = try Fixture(store, arguments: ["--max-session-items", "3"])
        let connection = fixture.connection
        #expect(try connection.request("PUT", "/sessions/small", json: #"{"items": [1, 2]}"#).status == 201)
        let tooMany = try connection.request("POST", "/sessions/small/append", json: #"{"items": [3, 4]}"#)
        #expect(tooMany.status == 413 && tooMany.errorCode == "too_many_items")
        #expect(try connection.request("POST", "/sessions/small/update", json: #"{"items": [1, 2, 3, 4]}"#).status == 413)
        let shown = try connection.request("GET", "/sessions/small")
        #expect(shown.json["version"]?.int == 0 && shown.json["count"]?.int == 2)
    }
}
