import Foundation
import RedisClient
import RedisCluster
import TestSupport
import Testing

/// The cluster pool against a real six-node cluster: keys land where Redis puts them, a
/// pipeline across slots comes back in order, and a slot moved, a slot moving and a master
/// killed are each followed without a command lost or run twice.
@Suite(.serialized) struct ClusterPoolTests {
    static func pool(_ cluster: RedisClusterProcess, timeout: Duration = .seconds(2)) throws -> RedisClusterPool {
        var configuration = try #require(RedisClusterConfiguration(url: cluster.url))
        configuration.node.commandTimeout = timeout
        return RedisClusterPool(configuration)
    }

    /// Sets `key` through the pool; its slot, the master that holds it, and another master.
    static func written(
        _ key: [UInt8], _ value: String, _ cluster: RedisClusterProcess, _ pool: RedisClusterPool
    ) throws -> (slot: Int, source: RedisProcess, target: RedisProcess) {
        #expect(try pool.run([["SET", .bytes(key), .text(value)]]) == [.status("OK")])
        let slot = HashSlot.of(key)
        let owner = try #require(pool.master(of: slot))
        let source = try #require(cluster.node(UInt16(owner.port)))
        let target = try #require(cluster.nodes.first { node in pool.masters.contains { $0.port == node.port } && node.port != source.port })
        return (slot, source, target)
    }

    @Test func slotsAreTheClustersOwn() throws {
        #expect(HashSlot.of(Array("123456789".utf8)) == 0x31C3 & 0x3FFF)
        #expect(HashSlot.of(Array("{user1000}.following".utf8)) == HashSlot.of(Array("user1000".utf8)))
        #expect(HashSlot.of(Array("foo{{bar}}zap".utf8)) == HashSlot.of(Array("{bar".utf8)))
        let cluster = try RedisClusterProcess()
        var random = SystemRandomNumberGenerator()
        for round in 0..<50 {
            let tag = round % 3 == 0 ? "{t\(random.next() % 1000)}" : ""
            let key = "k\(random.next())\(tag)x\(round % 5 == 0 ? "{}" : "")"
            let keyslot = try cluster.cli(cluster.nodes[0], ["CLUSTER", "KEYSLOT", key]).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(String(HashSlot.of(Array(key.utf8))) == keyslot, "\(key)")
        }
    }

    @Test func aPipelineAcrossSlotsAnswersInOrder() throws {
        let cluster = try RedisClusterProcess()
        let pool = try Self.pool(cluster)
        let keys = (0..<300).map { "key:\($0)" }
        let set = try pool.run(keys.map { ["SET", .text($0), .text("value of \($0)")] })
        #expect(set.allSatisfy { $0 == .status("OK") })
        let got = try pool.run(keys.map { ["GET", .text($0)] } + [["PING"]])
        #expect(got.dropLast() == keys.map { .string(Array("value of \($0)".utf8)) }[...])
        #expect(Set(keys.compactMap { pool.master(of: HashSlot.of(Array($0.utf8))) }).count == 3, "the keys span the three masters")
        // A script's key decides where it runs.
        let script = try pool.run([["EVAL", "return redis.call('GET', KEYS[1])", "1", "key:7"]])
        #expect(script == [.string(Array("value of key:7".utf8))])
    }

    /// A slot moved to another master after the pool read the map: `MOVED` sends the command
    /// there, and the map is read again.
    @Test func aMovedSlotIsFollowed() throws {
        let cluster = try RedisClusterProcess()
        let pool = try Self.pool(cluster)
        let key = Array("moved-key".utf8)
        let (slot, source, target) = try Self.written(key, "before", cluster, pool)
        try cluster.move(slot: slot, from: source, to: target)
        #expect(
            try pool.run([["GET", .bytes(key)], ["SET", .bytes(key), "after"], ["GET", .bytes(key)]]) == [
                .string(Array("before".utf8)), .status("OK"), .string(Array("after".utf8)),
            ])
        #expect(pool.master(of: slot)?.port == Int(target.port))
    }

    /// A slot half moved: a key already migrated is answered with `ASK`, followed once, and
    /// the map keeps the slot where it is until the move ends.
    @Test func aSlotBeingMovedIsAskedOfItsNewNode() throws {
        let cluster = try RedisClusterProcess()
        let pool = try Self.pool(cluster)
        let key = Array("asked-key".utf8)
        let (slot, source, target) = try Self.written(key, "value", cluster, pool)
        let owner = try #require(pool.master(of: slot))
        try cluster.beginMove(slot: slot, from: source, to: target)
        try cluster.migrateKeys(slot: slot, from: source, to: target)
        #expect(
            try pool.run([["GET", .bytes(key)], ["INCR", .bytes(Array("{asked-key}:count".utf8))]]) == [
                .string(Array("value".utf8)), .integer(1),
            ])
        #expect(pool.master(of: slot)?.port == owner.port, "an ASK changes no map")
        #expect(try cluster.cli(target, ["CLUSTER", "COUNTKEYSINSLOT", "\(slot)"]).trimmingCharacters(in: .whitespacesAndNewlines) == "2")
    }

    /// A master killed: until its replica is promoted the pool cannot reach it and the command
    /// fails saying so; after, the same pool reaches the new master, with what was written
    /// (and replicated) before.
    @Test func aKilledMastersReplicaTakesItsSlots() throws {
        let cluster = try RedisClusterProcess(nodeTimeout: 1_000)
        let pool = try Self.pool(cluster, timeout: .seconds(5))
        let key = Array("failover-key".utf8)
        let slot = HashSlot.of(key)
        _ = try pool.run([["PING"]])
        let owner = try #require(pool.master(of: slot))
        // Written on its master and replicated before the master dies (WAIT is the connection's).
        #expect(try pool.pool(owner).run([["SET", .bytes(key), "kept"], ["WAIT", "1", "5000"]]) == [.status("OK"), .integer(1)])
        try #require(cluster.node(UInt16(owner.port))).stop()
        let deadline = Date().addingTimeInterval(30)
        var reply: [RedisValue] = []
        while Date() < deadline {
            do {
                reply = try pool.run([["GET", .bytes(key)]])
                if reply == [.string(Array("kept".utf8))] { break }
            } catch {
                // Until the replica is promoted: no connection to the dead master, or (a
                // connection it dropped as it died) a command that got no reply.
                switch error {
                case .connect, .unanswered, .io: continue
                default: Issue.record("\(error)")
                }
            }
        }
        #expect(reply == [.string(Array("kept".utf8))])
        #expect(pool.master(of: slot) != owner)
        #expect(try pool.run([["SET", .bytes(key), "new"]]) == [.status("OK")])
    }
}
