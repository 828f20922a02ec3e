import ByteJSON
import Dispatch
import Foundation
import LiveCollections
import RedisClient
import Synchronization
import TestSupport
import Testing

/// Two replicas on one Redis: sessions are shared, every delta chains exactly, and neither a
/// replica's death nor Redis's makes the other hang or lie.
@Suite struct ReplicaTests {
    struct Answer: Sendable {
        var version: Int
        var baseVersion: Int
        var delta: IndexDelta
        var posted: [Thing]
    }

    /// Clients post updates, alternating between the given ports (a port whose replica has gone
    /// is skipped), and record every answer.
    static func load(
        ports: @escaping @Sendable () -> [UInt16], clients: Int, updates: Int, session: String
    ) -> (answers: [Answer], failures: [String], lost: [[Thing]]) {
        let answers = Mutex<[Answer]>([])
        let failures = Mutex<[String]>([])
        let lost = Mutex<[[Thing]]>([])
        DispatchQueue.concurrentPerform(iterations: clients) { client in
            var rng = SystemRandomNumberGenerator()
            for step in 0..<updates {
                let candidates = ports()
                let port = candidates[(client + step) % candidates.count]
                let posted = (0..<30).filter { _ in Bool.random(using: &rng) }.shuffled(using: &rng).map {
                    Thing(id: $0, content: (client + step) % 3)
                }
                do {
                    // Generous: under the whole suite's load on two cores, an answer can be slow
                    // without being wrong; one that never comes still fails.
                    let send = {
                        try HTTPConnection(port: port, timeoutSeconds: 30).request(
                            "POST", "/sessions/\(session)/update", json: "{\"items\":\(json(posted))}")
                    }
                    var reply = try send()
                    // Lost to other writers every time the server tried (503 busy, nothing
                    // committed): sent again, as the answer asks. Eight writers on one
                    // session on two loaded cores can take all of a commit's attempts.
                    for _ in 0..<5 where reply.status == 503 && reply.text.contains("\"busy\"") { reply = try send() }
                    guard reply.status == 200 || reply.status == 201, let version = reply.json["version"]?.int,
                        let base = reply.json["baseVersion"]?.int
                    else {
                        failures.withLock { $0.append("\(reply)") }
                        continue
                    }
                    answers.withLock {
                        $0.append(Answer(version: version, baseVersion: base, delta: try! indexDelta(reply.json["delta"]), posted: posted))
                    }
                } catch {
                    // A replica killed mid-request: it may have committed before dying, so
                    // what was posted may be a version whose answer never came.
                    failures.withLock { $0.append("\(port): \(error)") }
                    lost.withLock { $0.append(posted) }
                }
            }
        }
        return (answers.withLock { $0 }, failures.withLock { $0 }, lost.withLock { $0 })
    }

    /// Sorted by version, the answers replay from empty into exactly what the session holds.
    /// A version whose answer was lost (its replica died after committing) must be one of the
    /// `lost` posts: the next answer's delta then replays from it.
    static func expectExactChain(
        _ answers: [Answer], final: [Thing], finalVersion: Int?, lost: [[Thing]] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let byVersion = Dictionary(answers.map { ($0.version, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byVersion.count == answers.count, "a version answered twice", sourceLocation: sourceLocation)
        var state: [Thing] = []
        var gaps = 0
        for version in 1...max(1, finalVersion ?? 0) {
            guard let answer = byVersion[version] else {
                gaps += 1
                // The lost state is the one the next answer's delta starts from.
                guard let next = byVersion[version + 1],
                    let candidate = lost.first(where: { (try? next.delta.replay(old: $0, new: next.posted)) == next.posted })
                else {
                    Issue.record("version \(version) is missing", sourceLocation: sourceLocation)
                    return
                }
                state = candidate
                continue
            }
            #expect(answer.baseVersion == version - 1, sourceLocation: sourceLocation)
            do {
                state = try answer.delta.replay(old: state, new: answer.posted)
                guard state == answer.posted else {
                    Issue.record("version \(version): \(answer.delta) replays into \(state), not \(answer.posted)", sourceLocation: sourceLocation)
                    return
                }
            } catch {
                // Everything after would fail too; the first break is the one to look at.
                Issue.record("version \(version): \(answer.delta) from \(state) to \(answer.posted): \(error)", sourceLocation: sourceLocation)
                return
            }
        }
        #expect(gaps <= lost.count && final == state, sourceLocation: sourceLocation)
    }

    /// On one Redis and on a cluster, as the next three.
    @Test(arguments: [false, true]) func eightClientsAlternatingReplicasChainExactly(cluster: Bool) throws {
        let redis = try SharedRedis(cluster: cluster)
        let replicas = try (0..<2).map { _ in try ServerProcess(arguments: ["--session-store", redis.url]) }
        let ports = replicas.map(\.port)
        let (answers, failures, _) = Self.load(ports: { ports }, clients: 8, updates: 100, session: "shared")
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        let final = try replicas[1].connection().request("GET", "/sessions/shared")
        Self.expectExactChain(answers, final: things(final.json["items"]), finalVersion: final.json["version"]?.int)
        #expect(answers.count == 800)
        // The store's own figures: command latency, the copies kept, commits lost and retried.
        let metrics = try replicas[0].connection().request("GET", "/metrics").text
        for name in [
            "livedelta_session_store_command_seconds", "livedelta_session_store_cache_hits_total", "livedelta_session_store_cache_misses_total",
            "livedelta_session_store_conflicts_total",
        ] {
            #expect(metrics.contains(name), "\(name)")
        }
    }

    /// A session replaced starts again at version 0: a replica's copy of the earlier one, also
    /// at version 0, must not be taken for it.
    @Test(arguments: [false, true]) func aReplacedSessionIsNotMistakenForItsEarlierLife(cluster: Bool) throws {
        let redis = try SharedRedis(cluster: cluster)
        let (a, b) = (try ServerProcess(arguments: ["--session-store", redis.url]), try ServerProcess(arguments: ["--session-store", redis.url]))
        #expect(try a.connection().request("PUT", "/sessions/r", json: #"{"items":[1,2]}"#).status == 201)
        #expect(try b.connection().request("GET", "/sessions/r").json["count"]?.int == 2)
        let replaced = try a.connection().request("PUT", "/sessions/r", json: #"{"items":[7]}"#)
        #expect(replaced.status == 200)
        let seen = try b.connection().request("GET", "/sessions/r")
        #expect(seen.json["version"]?.int == 0 && seen.json["count"]?.int == 1)
        let updated = try b.connection().request(
            "POST", "/sessions/r/update", json: #"{"items":[7,8]}"#, headers: [("Content-Type", "application/json"), ("If-Match", "\"0\"")])
        let delta = try indexDelta(updated.json["delta"])
        #expect(updated.status == 200 && delta == IndexDelta(insertions: [1]))
    }

    /// A replica that holds no copy of a long session reads an offset window of it from the
    /// parts that hold the window alone: Redis is never asked for the whole session (no
    /// HGETALL), and the rows are the session's, before and after a commit elsewhere.
    @Test(arguments: [false, true]) func aWindowReadOnAColdReplicaReadsOnlyItsParts(cluster: Bool) throws {
        let redis = try SharedRedis(cluster: cluster)
        let (a, b) = (try ServerProcess(arguments: ["--session-store", redis.url]), try ServerProcess(arguments: ["--session-store", redis.url]))
        let items = (0..<20_000).map { "{\"id\":\($0),\"title\":\"row \($0)\"}" }.joined(separator: ",")
        #expect(try a.connection().request("PUT", "/sessions/long", json: "{\"items\":[\(items)]}").status == 201)
        func wholeReads() throws -> Int { try redis.calls(of: "hgetall") }
        let before = try wholeReads()
        let read = try b.connection().request("GET", "/sessions/long?offset=12000&limit=50")
        #expect(read.status == 200 && read.json["count"]?.int == 20_000, "\(read.status)")
        #expect(read.json["items"]?.array?.compactMap { $0["id"]?.int } == Array(12_000..<12_050))
        #expect(read.json["window"]?["offset"]?.int == 12_000 && read.json["window"]?["total"]?.int == 20_000)
        #expect(read.json["token"]?.stringValue?.hasSuffix(".0~12000-50") == true)
        #expect(try a.connection().request("POST", "/sessions/long/changes", json: #"{"operations":[{"op":"remove","id":0}]}"#).status == 200)
        let after = try b.connection().request("GET", "/sessions/long?offset=12000&limit=50")
        #expect(after.json["version"]?.int == 1 && after.json["items"]?.array?.compactMap { $0["id"]?.int } == Array(12_001..<12_051))
        let end = try b.connection().request("GET", "/sessions/long?offset=19990&limit=50")
        #expect(end.json["items"]?.array?.compactMap { $0["id"]?.int } == Array(19_991..<20_000))
        // Keyset windows: the part holding the anchor is found by the ids' hashes kept beside
        // each part (a script in Redis), and the answers are the writer's, refusals too.
        let keyset = ["/sessions/long?after=15000&limit=50", "/sessions/long?before=3&limit=10&overscan=2", "/sessions/long?after=1&limit=5"]
        for path in keyset {
            let (cold, held) = (try b.connection().request("GET", path), try a.connection().request("GET", path))
            #expect(cold.status == 200 && cold.text == held.text, "\(path)")
        }
        let anchored = try b.connection().request("GET", keyset[0])
        #expect(anchored.json["items"]?.array?.compactMap { $0["id"]?.int } == Array(15_001..<15_051))
        #expect(anchored.json["window"]?["offset"]?.int == 15_000 && anchored.json["window"]?["after"]?.int == 15_000)
        #expect(
            try b.connection().request("GET", "/sessions/long?after=1&limit=5").json["items"]?.array?.compactMap { $0["id"]?.int } == Array(2..<7))
        #expect(try wholeReads() == before)
        // An id in no part may be there spelled otherwise: the session is read whole, which says.
        let gone = try b.connection().request("GET", "/sessions/long?after=0x&limit=5")
        #expect(gone.status == 409 && gone.json["error"]?["code"]?.stringValue == "anchor_not_found", "\(gone.text)")
    }

    /// The same for a sectioned session, whose parts count sections: a window of whole sections
    /// is read from the parts that hold them, and the session's counts of items and sections
    /// (kept beside the parts) are its own, before and after commits elsewhere that remove an
    /// item and a section above the window.
    @Test(arguments: [false, true]) func aSectionedWindowReadOnAColdReplicaReadsOnlyItsParts(cluster: Bool) throws {
        let redis = try SharedRedis(cluster: cluster)
        let (a, b) = (try ServerProcess(arguments: ["--session-store", redis.url]), try ServerProcess(arguments: ["--session-store", redis.url]))
        let sections = (0..<3_000).map { section in
            let items = (0..<4).map { "{\"id\":\(section * 4 + $0),\"title\":\"row \(section * 4 + $0)\"}" }.joined(separator: ",")
            return "{\"id\":\"s\(section)\",\"items\":[\(items)]}"
        }.joined(separator: ",")
        #expect(try a.connection().request("PUT", "/sessions/long", json: "{\"sections\":[\(sections)]}").status == 201)
        func wholeReads() throws -> Int { try redis.calls(of: "hgetall") }
        func ids(_ json: JSONValue?) -> [String] { json?["sections"]?.array?.compactMap { $0["id"]?.stringValue } ?? [] }
        let before = try wholeReads()
        let read = try b.connection().request("GET", "/sessions/long?offset=2000&limit=20")
        #expect(read.status == 200 && read.json["count"]?.int == 12_000 && read.json["sectionCount"]?.int == 3_000, "\(read.status)")
        #expect(ids(read.json) == (2_000..<2_020).map { "s\($0)" })
        #expect(read.json["sections"]?.array?.first?["items"]?.array?.compactMap { $0["id"]?.int } == Array(8_000..<8_004))
        #expect(read.json["window"]?["offset"]?.int == 2_000 && read.json["window"]?["total"]?.int == 3_000)
        #expect(read.json["token"]?.stringValue?.hasSuffix(".0~2000-20") == true)
        let remove = #"{"operations":[{"op":"remove","id":1},{"op":"removeSection","id":"s5"}]}"#
        #expect(try a.connection().request("POST", "/sessions/long/changes", json: remove).status == 200)
        let after = try b.connection().request("GET", "/sessions/long?offset=2000&limit=20")
        #expect(after.json["version"]?.int == 1 && after.json["count"]?.int == 11_995 && after.json["sectionCount"]?.int == 2_999)
        #expect(ids(after.json) == (2_001..<2_021).map { "s\($0)" })
        let end = try b.connection().request("GET", "/sessions/long?offset=2990&limit=20")
        #expect(ids(end.json) == (2_991..<3_000).map { "s\($0)" } && end.json["window"]?["count"]?.int == 9)
        let anchored = try b.connection().request("GET", "/sessions/long?after=s1999&limit=20")
        #expect(ids(anchored.json) == (2_000..<2_020).map { "s\($0)" } && anchored.json["count"]?.int == 11_995)
        let held = try a.connection().request("GET", "/sessions/long?after=s1999&limit=20")
        #expect(anchored.text == held.text)
        #expect(try wholeReads() == before)
        // The same window as a replica holding the session answers it.
        let whole = try a.connection().request("GET", "/sessions/long?offset=2000&limit=20")
        #expect(whole.text == after.text)
    }

    /// A replica killed with SIGKILL in the middle of the load: the other carries on, the chain
    /// stays exact, and a replica started again serves the same session.
    @Test(arguments: [false, true]) func aReplicaKilledMidLoadLeavesTheChainExact(cluster: Bool) throws {
        let redis = try SharedRedis(cluster: cluster)
        let survivor = try ServerProcess(arguments: ["--session-store", redis.url])
        let doomed = try ServerProcess(arguments: ["--session-store", redis.url])
        let requests = Atomic<Int>(0)
        let killed = Atomic<Bool>(false)
        let (survivorPort, doomedPort) = (survivor.port, doomed.port)
        let doomedProcess = doomed.process.processIdentifier
        // After 150 requests, while the clients keep going, one replica dies at once.
        let (answers, _, lost) = Self.load(
            ports: {
                if requests.add(1, ordering: .relaxed).newValue == 150 {
                    kill(doomedProcess, SIGKILL)
                    killed.store(true, ordering: .releasing)
                }
                return killed.load(ordering: .acquiring) ? [survivorPort] : [survivorPort, doomedPort]
            }, clients: 8, updates: 60, session: "kept")
        let wasKilled = killed.load(ordering: .acquiring)
        #expect(wasKilled && answers.count >= 300)
        let final = try survivor.connection().request("GET", "/sessions/kept")
        Self.expectExactChain(answers, final: things(final.json["items"]), finalVersion: final.json["version"]?.int, lost: lost)
        let restarted = try ServerProcess(arguments: ["--session-store", redis.url])
        let again = try restarted.connection().request("GET", "/sessions/kept")
        #expect(
            again.status == 200 && again.json["version"]?.int == final.json["version"]?.int
                && things(again.json["items"]) == things(final.json["items"]))
    }

    /// Redis gone: session requests get a 503 within the timeout (a 504 `outcome_unknown` where
    /// the write was sent to a Redis that stopped answering: it runs it when it resumes), `/diff`
    /// still answers and `/ready` says not ready; Redis back: sessions work again without a
    /// restart.
    @Test func redisDownIsA503AndRedisBackIsServedAgain() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let server = try ServerProcess(arguments: ["--session-store", redis.url, "--redis-timeout", "300"])
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/s", json: #"{"items":[1,2]}"#).status == 201)
        #expect(try connection.request("GET", "/ready").status == 200)
        let outages: [(() -> Void, () -> Void, Int, String)] = [
            ({ redis.pause(true) }, { redis.pause(false) }, 504, "outcome_unknown"),
            ({ redis.stop() }, { try? redis.start() }, 503, "session_store_unavailable"),
        ]
        for (outage, restore, status, code) in outages {
            outage()
            let started = Date()
            let refused = try connection.request("POST", "/sessions/s/update", json: #"{"items":[2,3]}"#)
            #expect(
                refused.status == status && refused.errorCode == code && refused.header("Retry-After") == "1", "\(refused.status) \(refused.text)")
            #expect(Date().timeIntervalSince(started) < 2)
            #expect(try connection.request("POST", "/diff", json: #"{"old":[1],"new":[2]}"#).status == 200)
            let ready = try connection.request("GET", "/ready")
            #expect(ready.status == 503 && ready.errorCode == "session_store_unavailable")
            restore()
            #expect(try connection.request("GET", "/ready").status == 200)
        }
        // Redis restarted without persistence: the session is gone, and new ones work.
        #expect(try connection.request("GET", "/sessions/s").status == 404)
        #expect(try connection.request("PUT", "/sessions/s", json: #"{"items":[1]}"#).status == 201)
        #expect(try connection.request("POST", "/sessions/s/update", json: #"{"items":[1,2]}"#).json["version"]?.int == 1)
        #expect(server.stop() == 0)
    }

    /// A full Redis (`maxmemory` reached, nothing to evict) answers OOM: a 503 to try again,
    /// never a 500, and the session is as it was; once Redis has room, updates go on from there.
    /// Updates leave no staged bytes behind, whether they committed or were refused. With one
    /// connection to Redis an update stages its collection and waits; with more, it sends it on
    /// a connection of its own and reads the answer with its commit: both ways are checked.
    @Test(arguments: [1, 16]) func aFullRedisIsA503AndLeavesNothingBehind(connections: Int) throws {
        let redis = try RedisProcess(arguments: ["--maxmemory", "3mb", "--maxmemory-policy", "noeviction"])
        defer { redis.stop() }
        let server = try ServerProcess(arguments: ["--session-store", redis.url, "--redis-connections", String(connections)])
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/small", json: #"{"items":[1,2]}"#).status == 201)
        let big = "{\"items\":[" + (0..<90_000).map { #"{"id":\#($0),"title":"a title long enough to fill Redis"}"# }.joined(separator: ",") + "]}"
        let refused = try connection.request("POST", "/sessions/small/update", json: big)
        #expect(refused.status == 503 && refused.errorCode == "session_store_unavailable" && refused.header("Retry-After") == "1")
        let kept = try connection.request("GET", "/sessions/small")
        #expect(kept.json["version"]?.int == 0 && kept.json["count"]?.int == 2)
        let pool = RedisPool(try #require(RedisConfiguration(url: redis.url)))
        #expect(try pool.run(["CONFIG", "SET", "maxmemory", "0"]) == .status("OK"))
        let stale = try connection.request(
            "POST", "/sessions/small/update", json: #"{"items":[3]}"#, headers: [("Content-Type", "application/json"), ("If-Match", "\"7\"")])
        #expect(stale.status == 412)
        #expect(try connection.request("POST", "/sessions/small/update", json: #"{"items":[2,3]}"#).json["version"]?.int == 1)
        #expect(try pool.run(["KEYS", "*"]) == .array([.string(Array("livedelta:{small}".utf8))]))
    }
}
