import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

/// `Idempotency-Key` on every write, against the real binary: a retry gets the first answer and
/// commits nothing, whichever replica it reaches and across a restart; a reused key is a 422;
/// concurrent duplicates commit once; a refused first request lets its key go.
@Suite struct IdempotencyTests {
    static func post(_ connection: HTTPConnection, _ path: String, _ body: String, key: String?) throws -> Reply {
        var headers = [("Content-Type", "application/json")]
        if let key { headers.append(("Idempotency-Key", key)) }
        return try connection.request("POST", path, body: Array(body.utf8), headers: headers)
    }

    static func version(_ connection: HTTPConnection, _ id: String) throws -> Int? {
        try connection.request("GET", "/sessions/\(id)").json["version"]?.int
    }

    @Test(arguments: StoreKind.allCases) func aRetryGetsTheFirstAnswerAndCommitsNothing(store: StoreKind) throws {
        let fixture = try Fixture(store)
        let connection = fixture.connection
        #expect(try connection.request("PUT", "/sessions/k", json: #"{"items":[1]}"#).status == 201)
        let first = try Self.post(connection, "/sessions/k/append", #"{"items":[2]}"#, key: "\"a-1\"")
        #expect(first.status == 200 && first.header("Idempotent-Replayed") == nil)
        // The same key bare is the same key (many clients send it so).
        for key in ["\"a-1\"", "a-1"] {
            let retry = try Self.post(connection, "/sessions/k/append", #"{"items":[2]}"#, key: key)
            #expect(retry.status == 200 && retry.body == first.body && retry.header("ETag") == first.header("ETag"))
            #expect(retry.header("Idempotent-Replayed") == "true")
        }
        #expect(try Self.version(connection, "k") == 1)
        // Another body, another route or another condition under the key: a 422, nothing done.
        let reused = try Self.post(connection, "/sessions/k/append", #"{"items":[3]}"#, key: "a-1")
        #expect(reused.status == 422 && reused.errorCode == "idempotency_key_reused")
        #expect(try Self.post(connection, "/sessions/k/update", #"{"items":[2]}"#, key: "a-1").errorCode == "idempotency_key_reused")
        #expect(try Self.version(connection, "k") == 1)
        // POST /sessions: the retry names the same session, not a second one.
        let created = try Self.post(connection, "/sessions", #"{"items":[1]}"#, key: "c-1")
        let again = try Self.post(connection, "/sessions", #"{"items":[1]}"#, key: "c-1")
        #expect(created.status == 201 && again.status == 201 && again.header("Location") == created.header("Location"))
        #expect(again.body == created.body)
        // DELETE: the retry is answered as the first was (204), not 404.
        let deleteHeaders = [("Idempotency-Key", "d-1")]
        #expect(try connection.request("DELETE", "/sessions/k", headers: deleteHeaders).status == 204)
        let deletedAgain = try connection.request("DELETE", "/sessions/k", headers: deleteHeaders)
        #expect(deletedAgain.status == 204 && deletedAgain.header("Idempotent-Replayed") == "true")
        // Without the header nothing changes: the second append is a second append.
        #expect(try connection.request("PUT", "/sessions/plain", json: #"{"items":[]}"#).status == 201)
        _ = try Self.post(connection, "/sessions/plain/append", #"{"items":[1]}"#, key: nil)
        #expect(try Self.post(connection, "/sessions/plain/append", #"{"items":[1]}"#, key: nil).errorCode == "duplicate_id")
    }

    @Test func aRefusedFirstRequestLetsItsKeyGo() throws {
        let fixture = try Fixture(.memory)
        let connection = fixture.connection
        #expect(try connection.request("PUT", "/sessions/r", json: #"{"items":[1]}"#).status == 201)
        let refused = try Self.post(connection, "/sessions/r/append", #"{"items":[1]}"#, key: "r-1")
        #expect(refused.status == 422 && refused.errorCode == "duplicate_id")
        // It changed nothing, so the same request runs again (and is refused again, not replayed).
        let again = try Self.post(connection, "/sessions/r/append", #"{"items":[1]}"#, key: "r-1")
        #expect(again.errorCode == "duplicate_id" && again.header("Idempotent-Replayed") == nil)
        for bad in ["", "\"unclosed", "\"a\"b\"", String(repeating: "k", count: 256), "caf\u{E9}"] {
            let answer = try Self.post(connection, "/sessions/r/append", #"{"items":[2]}"#, key: bad)
            #expect(answer.status == 400 && answer.errorCode == "invalid_idempotency_key", "\(bad)")
        }
        #expect(try Self.version(connection, "r") == 0)
    }

    @Test func anAnswerLostOnTheWayIsFoundAgainByItsKey() throws {
        let fixture = try Fixture(.memory)
        #expect(try fixture.connection.request("PUT", "/sessions/lost", json: #"{"items":[]}"#).status == 201)
        // The request is sent and the connection dropped before the answer is read.
        let gone = try fixture.server.connection()
        let body = Array(#"{"items":[7]}"#.utf8)
        try gone.send(
            raw: Array(
                "POST /sessions/lost/append HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: lost-1\r\nContent-Length: \(body.count)\r\n\r\n"
                    .utf8) + body)
        gone.shutDown()
        var retry: Reply?
        _ = try eventually {
            retry = try Self.post(fixture.connection, "/sessions/lost/append", #"{"items":[7]}"#, key: "lost-1")
            return retry?.status != 409
        }
        #expect(retry?.status == 200)
        let session = try fixture.connection.request("GET", "/sessions/lost").json
        #expect(session["version"]?.int == 1 && session["items"]?.array?.count == 1)
    }

    @Test(arguments: StoreKind.allCases) func concurrentDuplicatesCommitOnce(store: StoreKind) throws {
        let fixture = try Fixture(store)
        #expect(try fixture.connection.request("PUT", "/sessions/dup", json: #"{"items":[]}"#).status == 201)
        let items = (0..<2_000).map(String.init).joined(separator: ",")
        let answers = Mutex<[Reply]>([])
        let port = fixture.server.port
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            guard let connection = try? HTTPConnection(port: port),
                let reply = try? Self.post(connection, "/sessions/dup/append", "{\"items\":[\(items)]}", key: "same")
            else { return }
            answers.withLock { $0.append(reply) }
        }
        let replies = answers.withLock { $0 }
        #expect(replies.count == 8)
        #expect(replies.allSatisfy { $0.status == 200 && $0.body == replies[0].body }, "\(replies.map(\.status))")
        #expect(replies.filter { $0.header("Idempotent-Replayed") == nil }.count == 1)
        #expect(try Self.version(fixture.connection, "dup") == 1)
    }

    /// On one Redis and on a cluster (where each key is kept in its session's slot); a creation
    /// too, which a retry finds by the id its key names.
    @Test(arguments: [false, true]) func aRetryOnAnotherReplicaOrAfterARestartIsAnsweredTheSame(cluster: Bool) throws {
        let redis = cluster ? nil : try RedisProcess()
        let nodes = cluster ? try RedisClusterProcess() : nil
        let store = try #require(redis?.url ?? nodes?.url)
        let first = try ServerProcess(arguments: ["--session-store", store])
        let second = try ServerProcess(arguments: ["--session-store", store])
        let created = try Self.post(try first.connection(), "/sessions", #"{"items":[1]}"#, key: "made-1")
        let createdElsewhere = try Self.post(try second.connection(), "/sessions", #"{"items":[1]}"#, key: "made-1")
        #expect(created.status == 201 && createdElsewhere.status == 201 && createdElsewhere.body == created.body)
        #expect(createdElsewhere.header("Idempotent-Replayed") == "true" && createdElsewhere.header("Location") == created.header("Location"))
        let a = try first.connection()
        #expect(try a.request("PUT", "/sessions/rep", json: #"{"items":[1]}"#).status == 201)
        let answer = try Self.post(a, "/sessions/rep/update", #"{"items":[2,1]}"#, key: "rep-1")
        let elsewhere = try Self.post(try second.connection(), "/sessions/rep/update", #"{"items":[2,1]}"#, key: "rep-1")
        #expect(answer.status == 200 && elsewhere.status == 200 && elsewhere.body == answer.body)
        #expect(elsewhere.header("Idempotent-Replayed") == "true")
        _ = first.stop()
        let restarted = try ServerProcess(arguments: ["--session-store", store])
        let later = try Self.post(try restarted.connection(), "/sessions/rep/update", #"{"items":[2,1]}"#, key: "rep-1")
        #expect(later.status == 200 && later.body == answer.body && later.header("Idempotent-Replayed") == "true")
        #expect(try Self.version(try restarted.connection(), "rep") == 1)
    }

    @Test(arguments: StoreKind.allCases) func anAnswerOverTheSizeKeptIsReplayedAsTookEffect(store: StoreKind) throws {
        let fixture = try Fixture(store, arguments: ["--idempotency-max-answer-bytes", "200"])
        let connection = fixture.connection
        #expect(try connection.request("PUT", "/sessions/big", json: #"{"items":[1]}"#).status == 201)
        let items = (2...200).map(String.init).joined(separator: ",")
        let first = try Self.post(connection, "/sessions/big/append", "{\"items\":[\(items)]}", key: "big-1")
        #expect(first.status == 200 && first.body.count > 200)
        // The retry is told the write took effect, with its version, and writes nothing again.
        let retry = try Self.post(connection, "/sessions/big/append", "{\"items\":[\(items)]}", key: "big-1")
        #expect(retry.status == 409 && retry.errorCode == "idempotency_answer_lost", "\(retry.status) \(retry.text)")
        #expect(retry.header("ETag") == first.header("ETag") && retry.header("Idempotent-Replayed") == "true")
        #expect(retry.text.contains("--idempotency-max-answer-bytes"))
        #expect(try Self.version(connection, "big") == 1)
        // A small answer is kept as it was.
        let small = try Self.post(connection, "/sessions/big/append", #"{"items":[999]}"#, key: "small-1")
        #expect(try Self.post(connection, "/sessions/big/append", #"{"items":[999]}"#, key: "small-1").body == small.body)
    }

    @Test func twoIdempotencyKeysAreRefused() throws {
        let fixture = try Fixture(.memory)
        #expect(try fixture.connection.request("PUT", "/sessions/two", json: #"{"items":[1]}"#).status == 201)
        let reply = try fixture.connection.request(
            "POST", "/sessions/two/append", body: Array(#"{"items":[2]}"#.utf8),
            headers: [("Content-Type", "application/json"), ("Idempotency-Key", "a"), ("Idempotency-Key", "b")])
        #expect(reply.status == 400 && reply.errorCode == "invalid_idempotency_key", "\(reply.status) \(reply.text)")
        #expect(reply.text.contains("2 Idempotency-Key fields"))
        #expect(try Self.version(fixture.connection, "two") == 0)
    }

    /// A write sent to a Redis that stops answering may still land when it resumes: its answer
    /// is a 504 `outcome_unknown` (retry with the key only), never a 503 that says nothing was
    /// done. A key whose claim reached Redis only after such a pause is not held for the whole
    /// lease: a retry with it runs once the unconfirmed claim lapses.
    @Test func aWriteRedisDidNotAnswerIsReportedUnknownNotRefused() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let server = try ServerProcess(arguments: ["--session-store", redis.url, "--redis-timeout", "300"])
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/paused", json: #"{"items":[1]}"#).status == 201)
        redis.pause(true)
        let unknown = try Self.post(connection, "/sessions/paused/append", #"{"items":[2]}"#, key: nil)
        #expect(unknown.status == 504 && unknown.errorCode == "outcome_unknown", "\(unknown.status) \(unknown.text)")
        #expect(unknown.header("Retry-After") != nil && unknown.text.contains("Idempotency-Key"))
        redis.pause(false)
        // The commit Redis held while stopped lands when it resumes: the write took effect once.
        let deadline = Date().addingTimeInterval(30)
        while try Self.version(connection, "paused") != 1 {
            #expect(Date() < deadline, "the commit sent before the pause never landed")
            if Date() >= deadline { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(try connection.request("GET", "/sessions/paused").json["items"]?.array?.count == 2)

        // A claim sent while Redis is stopped is not answered: nothing was done (503).
        redis.pause(true)
        let unclaimed = try Self.post(connection, "/sessions/paused/append", #"{"items":[3]}"#, key: "late-claim")
        #expect(unclaimed.status == 503 && unclaimed.errorCode == "session_store_unavailable", "\(unclaimed.status) \(unclaimed.text)")
        redis.pause(false)
        // The claim lands late, unconfirmed: a retry waits for it to lapse, then runs.
        let retried = try Self.post(connection, "/sessions/paused/append", #"{"items":[3]}"#, key: "late-claim")
        #expect(retried.status == 200, "\(retried.status) \(retried.text)")
        #expect(try Self.version(connection, "paused") == 2)
    }
}
