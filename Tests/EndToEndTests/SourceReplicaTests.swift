import ByteJSON
import Foundation
import LiveCollections
import TestSupport
import Testing

/// Sessions fed by a source on replicas sharing one Redis: one replica evaluates each session
/// at a time, every replica refuses HTTP writes to it and sends its versions, and when the
/// replica that evaluates it dies another takes it over.
@Suite(.serialized) struct SourceReplicaTests {
    /// Replica A creates a fed session and dies (SIGKILL) with changes still to come; B,
    /// whose subscriber follows the session throughout, takes it over within seconds: the
    /// changes made while nobody evaluated it arrive, and the subscriber's versions follow
    /// one another with none lost or repeated. A replica started after does not evaluate it
    /// again while B holds it: each change is one version.
    /// On one Redis and on a cluster (where the bindings are kept in each session's slot).
    @Test(arguments: [false, true]) func aReplicaKilledHasItsSessionsTakenOver(cluster: Bool) throws {
        let database = try SourceTests.Database()
        let redis = cluster ? nil : try RedisProcess()
        let nodes = cluster ? try RedisClusterProcess() : nil
        let store = try #require(redis?.url ?? nodes?.url)
        let a = try database.server(["--session-store", store])
        let b = try database.server(["--session-store", store])
        let toA = try a.connection()
        let toB = try b.connection()
        #expect(try SourceTests.create(toA, "gold", source: "leaderboard", params: #"{"league": "gold"}"#).status == 201)
        let stream = try EventStreamClient(port: b.port, path: "/sessions/gold/events?format=batch")
        let reset = try #require(try stream.next())
        #expect(reset.event == "reset")
        var follower = Follower(reset: try JSONValue(parsing: reset.data))

        // B knows the session is fed, though A feeds it.
        let refused = try toB.request("POST", "/sessions/gold/update", json: #"{"items": []}"#)
        #expect(refused.status == 409 && refused.json["error"]?["code"]?.stringValue == "source_fed", "\(refused.json)")
        try database.postgres.sql("UPDATE players SET score = 1000 WHERE id = 4")
        try follower.read(stream, to: #require(try SourceTests.settles(toB, "gold", at: try database.selected("gold"))))
        #expect(follower.version == 1)

        _ = a.stop(signal: SIGKILL)
        try database.postgres.sql("UPDATE players SET score = 5 WHERE id = 20")
        try database.postgres.sql("INSERT INTO players VALUES (200, 'gold', 'late', 77)")
        let expected = try database.selected("gold")
        let settled = try #require(try SourceTests.settles(toB, "gold", at: expected), "B took the session over")
        #expect(b.logShows("taken over"))
        try follower.read(stream, to: settled)
        #expect(.array(follower.rows) == expected)

        // A replica started now finds the session held.
        let c = try database.server(["--session-store", store])
        #expect(try SourceTests.create(try c.connection(), "silver", source: "leaderboard", params: #"{"league": "silver"}"#).status == 201)
        try database.postgres.sql("UPDATE players SET score = 3000 WHERE id = 8")
        let last = try #require(try SourceTests.settles(toB, "gold", at: try database.selected("gold")))
        #expect(last == settled + 1, "one change, one version")
        try follower.read(stream, to: last)
        #expect(.array(follower.rows) == (try database.selected("gold")))

        // A session replaced with items on one replica is no longer fed on any.
        #expect(try toB.request("PUT", "/sessions/gold", json: #"{"items": [{"id": 1}]}"#).status == 200)
        #expect(try toB.request("POST", "/sessions/gold/update", json: #"{"items": [{"id": 2}]}"#).status == 200)
        try database.postgres.sql("UPDATE players SET score = 1 WHERE id = 8")
        #expect(try SourceTests.settles(toB, "silver", at: try database.selected("silver")) != nil)
        #expect(try toB.request("GET", "/sessions/gold").json["items"] == (try JSONValue(parsing: #"[{"id": 2}]"#)))

        // A result refused on the replica that evaluates it is told on the others.
        #expect(try SourceTests.create(try c.connection(), "names", source: "byName").status == 201)
        let names = try EventStreamClient(port: b.port, path: "/sessions/names/events")
        #expect(try names.next()?.event == "reset")
        try database.postgres.sql("UPDATE players SET name = 'twin' WHERE id IN (2, 4)")
        let told = try #require(try names.next())
        #expect(try told.event == "source" && JSONValue(parsing: told.data)["problem"]?["code"]?.stringValue == "source_result_refused")
        #expect(try toB.request("GET", "/sessions/names").json["source"] == (try JSONValue(parsing: told.data)))
    }

    /// A subscriber's view: every delta must start where the last ended and replay to its rows.
    struct Follower {
        var version: Int
        var rows: [JSONValue]

        init(reset: JSONValue) {
            version = reset["version"]?.int ?? -1
            rows = reset["items"]?.array ?? []
        }

        mutating func read(_ stream: EventStreamClient, to last: Int) throws {
            while version < last {
                let event = try #require(try stream.next(), "version \(version + 1) of \(last)")
                guard event.event == "delta" else {
                    Issue.record("a \(event.event) at version \(version): \(event.data)")
                    return
                }
                let data = try JSONValue(parsing: event.data)
                #expect(data["baseVersion"]?.int == version && data["version"]?.int == version + 1, "\(event.data)")
                let next = data["items"]?.array ?? []
                #expect(try indexDelta(data["delta"]).replay(old: rows, new: next) == next)
                rows = next
                version = data["version"]?.int ?? version + 1
            }
        }
    }
}
