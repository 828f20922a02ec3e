import LiveDeltaService
import Logging
import RedisClient

/// Writes' `Idempotency-Key`s and first answers in Redis, beside the sessions, so that a retry
/// reaching another replica, or the same one after a restart, is answered the same.
///
/// One string per key, `<prefix>idempotency:{<tenant>}:<key>`: `r<fingerprint><nonce>` while the
/// first request runs (a claim that lapses after `lease`), `c<fingerprint>` once its write has
/// committed, then `d<fingerprint><status>` followed by the kept headers and the body; the last
/// two kept for the retention time. A key is claimed with one `SET … NX GET`, so two replicas
/// never both run a write. The session's commit script checks the claim and marks the key
/// committed in the same step (`IdempotencyHold`): a server that stops before its commit leaves
/// a claim that lapses, and a retry then runs; one that stops after it leaves the mark, and a
/// retry is told the write took effect (409 `idempotency_answer_lost`), never made twice.
package final class RedisIdempotencyLedger: IdempotencyLedger {
    private let redis: any RedisCommands
    private let prefix: [UInt8]
    private let retentionMilliseconds: Int
    private let leaseMilliseconds: Int
    /// How long a claim lasts until it is confirmed (`claim`): a claim whose reply never came
    /// (Redis paused past the timeout, which then runs it late) lapses this soon, not after
    /// the whole lease, and a retry of its request runs.
    private let unconfirmedMilliseconds: Int
    private let logger: Logger

    /// `lease`: how long a running request's claim lasts; a write still running then commits
    /// nothing where a retry has claimed the key since.
    package init(
        redis: any RedisCommands, keyPrefix: String = "livedelta:", retention: Duration = .seconds(86_400), lease: Duration = .seconds(60),
        logger: Logger
    ) {
        self.redis = redis
        prefix = Array((keyPrefix + "idempotency:").utf8)
        retentionMilliseconds = Self.milliseconds(retention)
        leaseMilliseconds = Self.milliseconds(lease)
        unconfirmedMilliseconds = min(leaseMilliseconds, 2 * Self.milliseconds(redis.commandTimeout) + 1_000)
        self.logger = logger
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000))
    }

    /// `<prefix>idempotency:{<tenant>}:<key>`; on a cluster, where the commit script that
    /// checks the key must find it in its session's slot, `<prefix>idempotency:{<session's
    /// store id>}:<tenant>:<key>`, with the session's hash tag. The store id holds the tenant's
    /// namespace, and the tenant is named again, so no two tenants' keys meet either way.
    private func redisKey(tenant: String, key: String, session: String?) -> [UInt8] {
        guard redis.isCluster, let session else { return prefix + Array("{\(tenant)}:".utf8) + Array(key.utf8) }
        return prefix + Array("{\(session)}:\(tenant):".utf8) + Array(key.utf8)
    }

    /// A claim's value: its own nonce, so that a claim taken over after its lease is told apart.
    private static func running(_ fingerprint: Fingerprint) -> [UInt8] {
        Array("r\(fingerprint.hex)\(Fingerprint(high: .random(in: .min ... .max), low: .random(in: .min ... .max)).hex)".utf8)
    }

    package func claim(tenant: String, key: String, session: String?, fingerprint: Fingerprint) throws(APIError) -> IdempotencyClaim {
        let reply: RedisValue
        let claim = Self.running(fingerprint)
        let redisKey = redisKey(tenant: tenant, key: key, session: session)
        do {
            reply = try redis.run([["SET", .bytes(redisKey), .bytes(claim), "NX", "GET", "PX", .text(String(unconfirmedMilliseconds))]])[0]
            // Claimed: the claim is confirmed for the whole lease (where it is still this one).
            if reply == .null {
                let extend = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"
                let extended = try redis.run([["EVAL", .text(extend), "1", .bytes(redisKey), .bytes(claim), .text(String(leaseMilliseconds))]])[0]
                guard extended == .integer(1) else { throw RedisError.reply("the claim lapsed before it was confirmed") }
            }
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
            return .claimed(
                IdempotencyHold(
                    key: redisKey, claim: claim, committed: Array("c\(fingerprint.hex)".utf8), retentionMilliseconds: retentionMilliseconds))
        }
        guard stored.count >= 33, let kept = Fingerprint(hex: Substring(decoding: stored[1..<33], as: UTF8.self)), kept == fingerprint else {
            return .reused
        }
        switch stored[0] {
        case UInt8(ascii: "r"): return .running
        case UInt8(ascii: "c"): return .unanswered
        default: return Self.answer(from: stored[33...]).map { .answered($0) } ?? .reused
        }
    }

    package func record(tenant: String, key: String, session: String?, fingerprint: Fingerprint, answer: RecordedAnswer) {
        var value = Array("d\(fingerprint.hex)".utf8)
        value += Array(String(answer.status).utf8)
        for header in answer.headers { value += Array("\n\(header.name)\n\(header.value)".utf8) }
        value += Array("\n\n".utf8)
        value += answer.body
        do {
            _ = try redis.run([
                ["SET", .bytes(redisKey(tenant: tenant, key: key, session: session)), .bytes(value), "PX", .text(String(retentionMilliseconds))]
            ])
        } catch {
            // The key stays marked committed: retries are told so, never write again.
            logger.warning("an Idempotency-Key's answer could not be kept", metadata: ["error": "\(error)"])
        }
    }

    package func release(tenant: String, key: String, session: String?, fingerprint: Fingerprint, hold: IdempotencyHold?) {
        // Only this request's own claim: not a retry's that took over after the lease.
        guard let hold else { return }
        let script = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        _ = try? redis.run([["EVAL", .text(script), "1", .bytes(hold.key), .bytes(hold.claim)]])
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
