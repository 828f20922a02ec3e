import LiveDeltaService
import MicroHTTP
import RedisClient
import RedisCluster
import TestSupport
import Testing

@testable import LiveDeltaRedis

/// Followed sessions' logs read together (one XREAD a slot for those read from a cursor, the
/// others one by one, all in one pipeline) give each session the steps its own read gives,
/// on one Redis and on a cluster, whose sessions span its slots.
@Suite(.serialized) struct LogReadTests {
    @Test(arguments: [false, true]) func logsReadTogetherAreEachLogsOwn(cluster: Bool) throws {
        let single = cluster ? nil : try RedisProcess()
        let nodes = cluster ? try RedisClusterProcess() : nil
        let url = try #require(single?.url ?? nodes?.url)
        let redis: any RedisCommands =
            if cluster {
                RedisClusterPool(try #require(RedisClusterConfiguration(url: url)))
            } else {
                RedisPool(try #require(RedisConfiguration(url: url)))
            }
        let storage = RedisSharedStorage(
            redis: redis, keyPrefix: "livedelta:", idleTimeout: .seconds(60), tenantQuotas: (100, 1 << 30), logger: .init(label: "test"),
            events: { _ in })
        let service = LiveDeltaService(sessions: SharedSessionStore.redis(redis))
        let ids = (0..<12).map { "log-\($0)" }
        storage.follow(ids)
        for (number, id) in ids.enumerated() {
            for round in 0...(number % 4) {
                let response = service.handle(
                    HTTPRequest(
                        method: "PUT", path: "/sessions/\(id)", headers: [("Content-Type", "application/json")],
                        body: ByteBuffer(Array("{\"items\":[\(round),\(100 + number)]}".utf8))))
                #expect(response.status == 200 || response.status == 201, "\(response.status) \(String(decoding: response.body, as: UTF8.self))")
            }
        }
        if let redis = redis as? RedisClusterPool {
            #expect(Set(ids.map { redis.master(of: HashSlot.of(Array("livedelta:{\($0)}:log".utf8))) }).count == 3, "the logs span the masters")
        }
        // Each from nothing (all the log keeps), from its first step, and from its last.
        let whole = try ids.map { try storage.steps(of: $0, after: nil) }
        #expect(whole.allSatisfy { !$0.isEmpty })
        let cursors: [String?] = whole.enumerated().map { index, steps in
            switch index % 3 {
            case 0: nil
            case 1: steps.first?.cursor
            default: steps.last?.cursor
            }
        }
        let together = storage.steps(of: Array(zip(ids, cursors)).map { (id: $0.0, cursor: $0.1) })
        for (index, id) in ids.enumerated() {
            let alone = try storage.steps(of: id, after: cursors[index])
            #expect(together[index]?.map(\.cursor) == alone.map(\.cursor), "\(id) from \(cursors[index] ?? "the start")")
            #expect(together[index]?.map(\.version) == alone.map(\.version))
        }
        #expect(together.enumerated().contains { index, steps in index % 3 == 2 && steps?.isEmpty == true }, "a log read from its last step has none")
    }
}
