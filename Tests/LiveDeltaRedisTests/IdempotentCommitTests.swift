import Glibc
import LiveDeltaRedis
import Logging
import MicroHTTP
import RedisClient
import TestSupport
import Testing

@testable import LiveDeltaService

/// With the Redis store, a write's `Idempotency-Key` is checked and marked committed by the
/// commit itself: a server that stops between its commit and keeping its answer leaves the key
/// saying so, and a request that outlived its claim writes nothing once a retry holds the key.
/// A server stopping at that instant is played by running the write under the claim's hold
/// (as `IdempotentWrites` does) and never recording its answer.
@Suite(.serialized) struct IdempotentCommitTests {
    struct Replica {
        let service: LiveDeltaService
        let ledger: RedisIdempotencyLedger

        init(_ redis: RedisProcess, lease: Duration = .seconds(60)) throws {
            let pool = RedisPool(try #require(RedisConfiguration(url: redis.url)))
            ledger = RedisIdempotencyLedger(redis: pool, lease: lease, logger: Logger(label: "test"))
            service = LiveDeltaService(sessions: SharedSessionStore.redis(pool) { _ in }, idempotency: ledger)
        }

        func send(_ request: HTTPRequest) -> (status: Int, body: String) {
            let response = service.handle(request)
            return (response.status, String(decoding: response.body, as: UTF8.self))
        }

        /// The write under `hold`, as the first request ran it, its answer never kept.
        func run(_ request: HTTPRequest, holding hold: IdempotencyHold) -> (status: Int, body: String) {
            IdempotencyHold.$current.withValue(hold) { send(Self.withoutKey(request)) }
        }

        static func withoutKey(_ request: HTTPRequest) -> HTTPRequest {
            HTTPRequest(
                method: request.method, path: request.path, headers: request.headers.filter { $0.0 != "Idempotency-Key" }, body: request.body)
        }

        func claim(_ request: HTTPRequest) throws -> IdempotencyClaim {
            try ledger.claim(tenant: "", key: "k", session: nil, fingerprint: Fingerprint(of: request))
        }
    }

    static func request(_ method: String, _ path: String, _ body: String, key: String? = "k") -> HTTPRequest {
        var headers = [("Content-Type", "application/json")]
        if let key { headers.append(("Idempotency-Key", key)) }
        return HTTPRequest(method: method, path: path, headers: headers, body: ByteBuffer(Array(body.utf8)))
    }

    static func items(_ replica: Replica) -> String {
        replica.send(request("GET", "/sessions/s", "", key: nil)).body
    }

    @Test func aWriteWhoseAnswerWasNeverKeptIsNotMadeAgain() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let replica = try Replica(redis)
        #expect(replica.send(Self.request("PUT", "/sessions/s", #"{"items":[1]}"#, key: nil)).status == 201)
        let append = Self.request("POST", "/sessions/s/append", #"{"items":[2]}"#)
        guard case .claimed(let hold?) = try replica.claim(append) else {
            Issue.record("the key should be free, with a hold for the commit")
            return
        }
        #expect(replica.run(append, holding: hold).status == 200)
        // Its server stopped here. A retry, on this replica or another, is told it took effect.
        for retrying in [replica, try Replica(redis)] {
            let retry = retrying.send(append)
            #expect(retry.status == 409 && retry.body.contains("idempotency_answer_lost"), "\(retry)")
        }
        #expect(Self.items(replica).contains(#""items":[1,2]"#) && Self.items(replica).contains(#""version":1"#), "\(Self.items(replica))")
    }

    @Test func aWriteThatOutlivedItsClaimWritesNothingOnceARetryHoldsTheKey() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let replica = try Replica(redis, lease: .milliseconds(100))
        #expect(replica.send(Self.request("PUT", "/sessions/s", #"{"items":[1]}"#, key: nil)).status == 201)
        // An update, which would commit again on top of the retry's (an update would be refused
        // as a duplicate before reaching its commit).
        let update = Self.request("POST", "/sessions/s/update", #"{"items":[2,1]}"#)
        guard case .claimed(let stale?) = try replica.claim(update) else {
            Issue.record("the key should be free, with a hold for the commit")
            return
        }
        usleep(300_000)
        // The first request's server went quiet past its lease: a retry claims the key and runs.
        #expect(replica.send(update).status == 200)
        let late = replica.run(update, holding: stale)
        #expect(late.status == 409 && late.body.contains("idempotency_key_in_use"), "\(late)")
        #expect(Self.items(replica).contains(#""items":[2,1]"#) && Self.items(replica).contains(#""version":1"#), "\(Self.items(replica))")
        // And the retry's answer is the one kept.
        #expect(replica.send(update).status == 200)
    }

    @Test func aClaimThatLapsedWithNoOneTakingItStillCommitsOnce() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let replica = try Replica(redis, lease: .milliseconds(100))
        #expect(replica.send(Self.request("PUT", "/sessions/s", #"{"items":[1]}"#, key: nil)).status == 201)
        let delete = Self.request("DELETE", "/sessions/s", "")
        guard case .claimed(let hold?) = try replica.claim(delete) else {
            Issue.record("the key should be free, with a hold for the commit")
            return
        }
        usleep(300_000)
        #expect(replica.run(delete, holding: hold).status == 204)
        let retry = replica.send(delete)
        #expect(retry.status == 409 && retry.body.contains("idempotency_answer_lost"), "\(retry)")
    }
}
