import Foundation
import LiveDeltaRedis
import LiveDeltaService
import MicroHTTP
import RedisClient
import TestSupport
import Testing

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// A replica's own commits reach its observer from the committing thread, never as a read of
/// the whole session by the listener, even where the listener reads the commit's step from
/// the log first; another replica's commits reach it through the listener.
@Suite(.serialized) struct OwnCommitTests {
    /// Follows one session; tells what it was told, and how.
    final class Observer: SessionObserver {
        struct Heard {
            var incarnation: String?
            var version: UInt64?
            /// Versions told by the committing thread.
            var committedHere: [UInt64] = []
            /// Versions told by the listener, with the session read.
            var read: [UInt64] = []
        }
        let id: String
        let heard = NIOLockedValueBox(Heard())

        init(id: String) { self.id = id }

        func committed(_ change: SessionChange) {}
        func replaced(_ snapshot: SessionSnapshot) { took(snapshot.incarnation, snapshot.version) }
        func ended(id: String, incarnation: String, reason: SessionEnd) {}
        func stored(_ snapshot: SessionSnapshot, appended: Bool, baseVersion: UInt64?) { took(snapshot.incarnation, snapshot.version) }

        func committedHere(_ change: SessionChange) {
            // The listener hears of the step as soon as storage has it; the committing thread
            // is held up here so that the listener would read the step first.
            usleep(50_000)
            heard.withLockedValue {
                $0.committedHere.append(change.version)
                ($0.incarnation, $0.version) = (change.incarnation, change.version)
            }
        }

        private func took(_ incarnation: String, _ version: UInt64) {
            heard.withLockedValue {
                $0.read.append(version)
                ($0.incarnation, $0.version) = (incarnation, version)
            }
        }

        func follows(id: String) -> Bool { id == self.id }
        var followedIDs: [String] { [id] }
        func holds(id: String, incarnation: String, version: UInt64) -> Bool {
            heard.withLockedValue { $0.incarnation == incarnation && ($0.version ?? 0) >= version }
        }
        func incarnation(of id: String) -> String? { heard.withLockedValue { $0.incarnation } }
    }

    static func items(_ values: [Int]) throws -> JSONCollection {
        try CollectionDocument.read(ByteBuffer(Array("[\(values.map(String.init).joined(separator: ","))]".utf8)))
    }

    @Test func ownCommitsAreToldByTheirThreadAndNotReadAgain() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let configuration = try #require(RedisConfiguration(url: redis.url))
        let store = SharedSessionStore.redis(RedisPool(configuration))
        let other = SharedSessionStore.redis(RedisPool(configuration))
        defer {
            store.close()
            other.close()
        }
        let observer = Observer(id: "own")
        store.observe(with: observer)
        _ = try store.put(id: "own", options: DiffOptions(), collection: try Self.items([0]))
        store.follow(["own"])
        // A session put whole is read by the listener, as any replica's would be.
        _ = try other.append(id: "own", try Self.items([1]), readWith: DiffOptions(), condition: .any)
        #expect(eventually { observer.heard.withLockedValue { $0.read.contains(1) } })
        for value in 2...6 {
            _ = try store.append(id: "own", try Self.items([value]), readWith: DiffOptions(), condition: .any)
        }
        // The log is read in order: once the other replica's next step is heard, every step
        // before it has been read too.
        _ = try other.append(id: "own", try Self.items([7]), readWith: DiffOptions(), condition: .any)
        #expect(eventually { observer.heard.withLockedValue { $0.read.contains(7) } })
        let heard = observer.heard.withLockedValue { $0 }
        #expect(heard.committedHere == [2, 3, 4, 5, 6])
        // (The session as put may be read too, when the listener starts.)
        #expect(!heard.read.contains { (2...6).contains($0) }, "the listener read the session for its own commits: \(heard.read)")
    }
}
