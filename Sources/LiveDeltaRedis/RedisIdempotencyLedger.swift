import LiveDeltaService
import Logging
import RedisClient

/// Writes' `Idempotency-Key`s and first answers in Redis, beside the sessions, so that a retry
/// reaching another replica, or the same one after a restart, is answered the same.
///
/// One string per key, `<prefix>idempotency:{<tenant>}:<key>`, expiring after the retention
/// time: `r<fingerprint>` while the first request runs, then `d<fingerprint><status>` followed by
/// the kept headers and the body. A key is claimed with one `SET … NX GET`, so two replicas never
/// both run a write. The claim is not part of the session's commit: where a server stops between
/// its commit and recording the answer, the key stays claimed (as running) for the retention
/// time, and retries get a 409 saying to read the session, rather than a second commit.
package final class RedisIdempotencyLedger: IdempotencyLedger {
    private let redis: RedisPool
    private let prefix: [UInt8]
    private let retentionMilliseconds: Int
    private let logger: Logger

    package init(redis: RedisPool, keyPrefix: String = "livedelta:", retention: Duration = .seconds(86_400), logger: Logger) {
        self.redis = redis
        prefix = Array((keyPrefix + "idempotency:").utf8)
        retentionMilliseconds = Int(retention.components.seconds) * 1_000
        self.logger = logger
    }

    private func redisKey(tenant: String, key: String) -> RedisArgument {
        .bytes(prefix + Array("{\(tenant)}:".utf8) + Array(key.utf8))
    }

    private static func running(_ fingerprint: Fingerprint) -> [UInt8] { Array("r\(fingerprint.hex)".utf8) }

    package func claim(tenant: String, key: String, fingerprint: Fingerprint) throws(APIError) -> IdempotencyClaim {
        let reply: RedisValue
        do {
            reply = try redis.run([
                [
                    "SET", redisKey(tenant: tenant, key: key), .bytes(Self.running(fingerprint)), "NX", "GET", "PX",
                    .text(String(retentionMilliseconds)),
                ]
            ])[0]
        } catch {
            var refusal = APIError(.sessionStoreUnavailable, message: "the session store cannot be reached just now to check the Idempotency-Key")
            refusal.headers = [("Retry-After", "1")]
            throw refusal
        }
        guard let stored = reply.bytes else {
            if case .error(let message) = reply {
                logger.error("idempotency key claim failed", metadata: ["error": "\(message)"])
                throw APIError.internalError("the session store refused to keep an Idempotency-Key")
            }
            return .claimed
        }
        guard stored.count >= 33, let kept = Fingerprint(hex: Substring(decoding: stored[1..<33], as: UTF8.self)), kept == fingerprint else {
            return .reused
        }
        if stored[0] == UInt8(ascii: "r") { return .running }
        return Self.answer(from: stored[33...]).map { .answered($0) } ?? .reused
    }

    package func record(tenant: String, key: String, fingerprint: Fingerprint, answer: RecordedAnswer) {
        var value = Array("d\(fingerprint.hex)".utf8)
        value += Array(String(answer.status).utf8)
        for header in answer.headers { value += Array("\n\(header.name)\n\(header.value)".utf8) }
        value += Array("\n\n".utf8)
        value += answer.body
        do {
            _ = try redis.run([["SET", redisKey(tenant: tenant, key: key), .bytes(value), "PX", .text(String(retentionMilliseconds))]])
        } catch {
            // The key stays claimed as running: retries get a 409, never a second write.
            logger.warning("an Idempotency-Key's answer could not be kept", metadata: ["error": "\(error)"])
        }
    }

    package func release(tenant: String, key: String, fingerprint: Fingerprint) {
        let script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        _ = try? redis.run([["EVAL", .text(script), "1", redisKey(tenant: tenant, key: key), .bytes(Self.running(fingerprint))]])
    }

    /// `<status>` then `\n<name>\n<value>` per header, `\n\n`, the body.
    private static func answer(from bytes: ArraySlice<UInt8>) -> RecordedAnswer? {
        let newline = UInt8(ascii: "\n")
        guard let end = bytes.indices.first(where: { $0 + 1 < bytes.endIndex && bytes[$0] == newline && bytes[$0 + 1] == newline }) else {
            return nil
        }
        let lines = bytes[bytes.startIndex..<end].split(separator: newline, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard let status = lines.first.flatMap({ Int($0) }), lines.count % 2 == 1 else { return nil }
        let headers = stride(from: 1, to: lines.count, by: 2).map { RecordedAnswer.Header(name: lines[$0], value: lines[$0 + 1]) }
        return RecordedAnswer(status: status, headers: headers, body: Array(bytes[(end + 2)...]))
    }
}
