import ByteJSON
import Dispatch
import Foundation
import LiveDeltaRedis
import LiveDeltaService
import MicroHTTP
import RedisClient
import TestSupport
import Testing

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// Two replicas in one process, each a service with its own `SharedSessionStore` on one real
/// Redis: without HTTP in between, their changes to one session collide far more often than
/// over the wire, and every answer must still chain exactly. (`make test-thread` runs it
/// under ThreadSanitizer too.)
@Suite struct SharedStoreConcurrencyTests {
    /// Locked with pthread mutexes (NIO's), which ThreadSanitizer sees; it cannot see the
    /// futex under `Synchronization.Mutex`, and would report its users as racing.
    final class Results: Sendable {
        let answers = NIOLockedValueBox<[ReplicaTests.Answer]>([])
        /// 503 `busy`: the change lost its commit to the other replica every time it tried,
        /// and nothing was stored.
        let busy = NIOLockedValueBox(0)
        let failures = NIOLockedValueBox<[String]>([])
    }

    @Test func twoReplicasInOneProcessChainEveryUpdateExactly() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let configuration = try #require(RedisConfiguration(url: redis.url))
        let replicas = (0..<2).map { _ in LiveDeltaService(sessions: SharedSessionStore.redis(RedisPool(configuration))) }
        let results = Results()
        // Threads of their own: concurrentPerform would run only as many clients as cores.
        let group = DispatchGroup()
        for client in 0..<8 {
            group.enter()
            Thread {
                Self.post(250, from: client, to: replicas, into: results)
                group.leave()
            }.start()
        }
        group.wait()
        #expect(results.failures.withLockedValue { $0 }.isEmpty, "\(results.failures.withLockedValue { $0.prefix(3) })")
        let final = replicas[0].handle(HTTPRequest(method: "GET", path: "/sessions/shared"))
        let stored = (try? JSONValue(parsing: String(decoding: final.body, as: UTF8.self))) ?? .null
        let answers = results.answers.withLockedValue { $0 }
        #expect(answers.count + results.busy.withLockedValue { $0 } == 2_000)
        ReplicaTests.expectExactChain(answers, final: things(stored["items"]), finalVersion: stored["version"]?.int)
    }

    /// One client's updates, taking the replicas in turn.
    static func post(_ updates: Int, from client: Int, to replicas: [LiveDeltaService], into results: Results) {
        var rng = SystemRandomNumberGenerator()
        for step in 0..<updates {
            let posted = (0..<30).filter { _ in Bool.random(using: &rng) }.shuffled(using: &rng).map { Thing(id: $0, content: (client + step) % 3) }
            let request = HTTPRequest(
                method: "POST", path: "/sessions/shared/update", headers: [("Content-Type", "application/json")],
                body: Array("{\"items\":\(json(posted))}".utf8))
            let response = replicas[(client + step) % replicas.count].handle(request)
            let reply = (try? JSONValue(parsing: String(decoding: response.body, as: UTF8.self))) ?? .null
            guard response.status == 200 || response.status == 201, let version = reply["version"]?.int, let base = reply["baseVersion"]?.int,
                let delta = try? indexDelta(reply["delta"])
            else {
                if response.status == 503 && reply["error"]?["code"]?.stringValue == "busy" {
                    results.busy.withLockedValue { $0 += 1 }
                } else {
                    results.failures.withLockedValue { $0.append("\(response.status): \(String(decoding: response.body, as: UTF8.self))") }
                }
                continue
            }
            results.answers.withLockedValue { $0.append(ReplicaTests.Answer(version: version, baseVersion: base, delta: delta, posted: posted)) }
        }
    }
}
