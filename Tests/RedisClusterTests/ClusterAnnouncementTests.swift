import Foundation
import RedisClient
import Synchronization
import TestSupport
import Testing

@testable import RedisCluster

/// Announcements on a real six-node cluster: one sharded channel a slot, heard on one
/// connection a master, and heard again after the slot moves to another master or its master
/// dies, with the listener told to catch up each time.
@Suite(.serialized) struct ClusterAnnouncementTests {
    /// What a listener heard, and how many times it was told it (re)subscribed.
    final class Heard: Sendable {
        let messages = Mutex<[String]>([])
        let subscribed = Atomic<Int>(0)
        /// What each (re)subscription said of the cluster's data: kept, or maybe not.
        let kept = Mutex<[Bool]>([])

        func has(_ message: String) -> Bool { messages.withLock { $0.contains(message) } }
    }

    static func listen(_ pool: RedisClusterPool, _ heard: Heard) -> any RedisListening {
        pool.listen(
            "test:live", onMessage: { message in heard.messages.withLock { $0.append(String(decoding: message, as: UTF8.self)) } },
            onSubscribed: { kept in
                heard.kept.withLock { $0.append(kept) }
                heard.subscribed.add(1, ordering: .relaxed)
            })
    }

    /// Waits up to `seconds` for `condition`.
    static func eventually(_ seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(10_000)
        }
        return try condition()
    }

    /// Publishes `message` on `key`'s channel until the listener hears it (a publish before the
    /// new owner's subscription is made reaches no one, as Redis keeps nothing).
    static func heardAgain(_ message: String, about key: [UInt8], _ pool: RedisClusterPool, _ heard: Heard) -> Bool {
        eventually {
            _ = try? pool.run([["SPUBLISH", .bytes(pool.announcementChannel("test:live", for: key)), .text(message)]])
            return eventually(0.05) { heard.has(message) }
        }
    }

    @Test func everySlotHasAChannelOfItsOwnSlot() {
        #expect(HashSlot.tags.count == HashSlot.count)
        for slot in stride(from: 0, to: HashSlot.count, by: 97) {
            #expect(HashSlot.of(RedisClusterPool.channel("livedelta:live", slot: slot)) == slot)
        }
        #expect(HashSlot.tags.allSatisfy { $0.count <= 4 })
    }

    /// Each master's slots are heard on one connection to it, and a message on any slot's
    /// channel reaches the listener once.
    @Test func announcementsOnEverySlotAreHeardOnceAMaster() throws {
        let cluster = try RedisClusterProcess()
        let pool = try ClusterPoolTests.pool(cluster)
        let heard = Heard()
        let listener = Self.listen(pool, heard)
        defer { listener.stop() }
        #expect(Self.eventually { heard.subscribed.load(ordering: .relaxed) == 1 })
        let keys = (0..<60).map { Array("{session-\($0)}".utf8) }
        #expect(Set(keys.compactMap { pool.master(of: HashSlot.of($0)) }).count == 3)
        let published = try pool.run(keys.map { ["SPUBLISH", .bytes(pool.announcementChannel("test:live", for: $0)), .bytes($0)] })
        #expect(published.allSatisfy { $0 == .integer(1) }, "one subscriber a channel: \(published)")
        #expect(Self.eventually { heard.messages.withLock { $0.count } == keys.count })
        #expect(Set(heard.messages.withLock { $0 }) == Set(keys.map { String(decoding: $0, as: UTF8.self) }))
        // One subscribing connection a master.
        for master in pool.masters {
            let clients = try cluster.cli(try #require(cluster.node(UInt16(master.port))), ["CLIENT", "LIST"])
            #expect(clients.split(separator: "\n").filter { $0.contains("cmd=ssubscribe") }.count == 1, "\(master): \(clients)")
        }
    }

    /// A slot moved to another master: Redis ends its subscribers' hearing of it, the listener
    /// subscribes again where the slot now is, is told to catch up, and hears it again.
    @Test func aMovedSlotIsHeardAgainAtItsNewMaster() throws {
        let cluster = try RedisClusterProcess()
        let pool = try ClusterPoolTests.pool(cluster)
        let heard = Heard()
        let listener = Self.listen(pool, heard)
        defer { listener.stop() }
        let key = Array("{moved-session}".utf8)
        let (slot, source, target) = try ClusterPoolTests.written(key, "v", cluster, pool)
        #expect(Self.heardAgain("before", about: key, pool, heard))
        let subscriptions = heard.subscribed.load(ordering: .relaxed)
        try cluster.move(slot: slot, from: source, to: target)
        let moved = Date()
        #expect(Self.heardAgain("after", about: key, pool, heard))
        print("a moved slot's announcements heard again \(Int(Date().timeIntervalSince(moved) * 1_000)) ms after the move")
        // Told once every master's subscription is confirmed, which may be after the moved
        // slot's is heard.
        #expect(Self.eventually { heard.subscribed.load(ordering: .relaxed) > subscriptions }, "told to catch up")
        #expect(heard.kept.withLock { $0 }.first == false, "nothing is known of what came before the first subscription")
        #expect(heard.kept.withLock { $0 }.dropFirst().allSatisfy { $0 }, "a slot that moved lost nothing: the logs are enough")
        #expect(pool.master(of: slot)?.port == Int(target.port))
    }

    /// A master killed: once its replica is promoted, its slots are heard again there.
    @Test func aFailedOverMastersSlotsAreHeardAgain() throws {
        let cluster = try RedisClusterProcess(nodeTimeout: 1_000)
        let pool = try ClusterPoolTests.pool(cluster, timeout: .seconds(5))
        let heard = Heard()
        let listener = Self.listen(pool, heard)
        defer { listener.stop() }
        let key = Array("{failover-session}".utf8)
        #expect(Self.heardAgain("before", about: key, pool, heard))
        let owner = try #require(pool.master(of: HashSlot.of(key)))
        try #require(cluster.node(UInt16(owner.port))).stop()
        #expect(Self.heardAgain("after", about: key, pool, heard))
        #expect(pool.master(of: HashSlot.of(key)) != owner)
        #expect(heard.kept.withLock { $0 }.last == false, "a failover may have lost the latest writes")
    }
}
