import ByteJSON
import Foundation
import TestSupport
import Testing

/// Two replicas of the server on a real six-node Redis Cluster, writers and subscribers on
/// both, while the followed session's slot moves to another master, that master dies and its
/// replica takes over, and a server replica restarts: every subscriber sees every version
/// once, in order, and ends on the session's list.
@Suite(.serialized) struct ClusterTests {
    static func body(_ things: [Thing]) -> String { "{\"items\":\(json(things))}" }

    /// Commits a random list on `server` until one is taken (a failover under way answers 503
    /// for a while); the version it made.
    static func commit(_ server: ServerProcess, _ generator: inout SystemRandomNumberGenerator) throws -> Int {
        let deadline = Date().addingTimeInterval(60)
        while true {
            let answer = try server.connection().request("POST", "/sessions/shared/update", json: body(LiveTests.randomThings(&generator)))
            if answer.status == 200, let version = answer.json["version"]?.int { return version }
            guard answer.status == 503, Date() < deadline else { throw ClientError.malformed("a commit was answered \(answer)") }
            usleep(20_000)
        }
    }

    /// A store URL of the wrong kind is warned of at start: a cluster node named by `redis://`
    /// (most keys would answer `MOVED`), a plain Redis named by `redis-cluster://`.
    @Test func aStoreURLOfTheWrongKindIsWarnedOf() throws {
        let cluster = try RedisClusterProcess()
        let node = try #require(cluster.nodes.first)
        let plain = try ServerProcess(arguments: ["--session-store", node.url])
        #expect(plain.logShows("this Redis is a node of a Redis Cluster: name it with redis-cluster://"))
        let right = try ServerProcess(arguments: ["--session-store", cluster.url])
        #expect(try right.connection().request("PUT", "/sessions/w", json: Self.body([Thing(id: 1)])).status == 201)
        #expect(!right.log.contains("this Redis is"))
        let single = try RedisProcess()
        let wrong = try ServerProcess(arguments: ["--session-store", "redis-cluster://127.0.0.1:\(single.port)"])
        #expect(wrong.logShows("this Redis is not a cluster: name it with redis://"))
    }

    @Test func subscribersOnBothReplicasFollowThroughSlotMovesFailoversAndRestarts() throws {
        let cluster = try RedisClusterProcess(nodeTimeout: 1_000)
        let arguments = ["--session-store", cluster.url, "--redis-timeout", "3000"]
        let a = try ServerProcess(arguments: arguments)
        var b = try ServerProcess(arguments: arguments)
        var generator = SystemRandomNumberGenerator()
        #expect(try a.connection().request("PUT", "/sessions/shared", json: Self.body((0..<10).map { Thing(id: $0) })).status == 201)
        var followers = try [a.port, b.port].flatMap { port in
            try ["keyed", "batch", "jsonPatch"].map { try LiveFollower(port: port, session: "shared", format: $0) }
        }
        var version = 0
        func commits(_ count: Int) throws {
            for round in 0..<count { version = try Self.commit(round % 2 == 0 ? a : b, &generator) }
            for follower in followers { #expect(try follower.follow(until: version), "\(follower.format) stopped at \(follower.version ?? -1)") }
        }
        try commits(10)

        // The session's slot moves to another master.
        let slot = try cluster.slot(of: "livedelta:{shared}")
        let owner = try cluster.owner(of: slot)
        let source = try #require(owner)
        let target = try #require(try cluster.nodes.first { try cluster.masters(seen: $0).contains($0.port) && $0.port != source.port })
        try cluster.move(slot: slot, from: source, to: target)
        let moved = Date()
        version = try Self.commit(b, &generator)
        for follower in followers { #expect(try follower.follow(until: version)) }
        print("after the slot moved, the first commit reached every subscriber in \(Int(Date().timeIntervalSince(moved) * 1_000)) ms")
        try commits(10)

        // Its new master dies; its replica takes the slot over.
        let newOwner = try cluster.owner(of: slot)
        try #require(newOwner).stop()
        try commits(10)
        #expect(try cluster.owner(of: slot)?.port != target.port)

        // Replica B restarts; its subscribers resume there by their tokens.
        let tokens = followers.map { $0.client.lastEventID }
        b.stop(signal: SIGKILL)
        version = try Self.commit(a, &generator)
        b = try ServerProcess(arguments: arguments)
        followers = try zip(followers, tokens).enumerated().map { index, pair in
            let (follower, token) = pair
            guard index >= 3 else { return follower }
            let again = try LiveFollower(port: b.port, session: "shared", format: follower.format, lastEventID: token)
            again.adopt(follower)
            return again
        }
        try commits(10)

        let final = try a.connection().request("GET", "/sessions/shared")
        #expect(final.json["version"]?.int == version)
        for follower in followers {
            #expect(follower.problems.isEmpty, "\(follower.format): \(follower.problems.prefix(2))")
            #expect(follower.items == (final.json["items"]?.array ?? []), "\(follower.format) ends on another list")
            #expect(follower.resets == 1, "\(follower.format): \(follower.resets) resets (\(follower.resetVersions))")
        }
    }
}
