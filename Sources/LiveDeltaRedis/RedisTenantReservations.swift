import LiveDeltaService
import RedisClient

/// Tenant quotas on a Redis Cluster. A tenant's count (`RedisTenantQuotas`' two keys, with the
/// tenant as their hash tag, and a third of reservations) is in one slot and each of its
/// sessions in another, and a script may touch one slot only; so a commit that counts is made
/// in three steps, each atomic in its own slot:
/// 1. `reserve`, in the tenant's slot: the same checks as on one Redis, and where they pass the
///    session counted at once as if committed, with a note of what it was counted at before
///    (`reserved`, under a nonce of this commit's own);
/// 2. the commit, in the session's slot;
/// 3. `settle`, in the tenant's slot: a commit that did not happen puts the count back as it
///    was, where no later reservation of the same session has counted it since.
/// Two replicas committing one session at once both reserve, and whichever commit loses puts
/// back only its own reservation. A process that dies between the steps leaves the session
/// counted (a commit whose outcome is unknown too): the count errs towards refusing, never
/// past a quota. Sessions that expired are found as on one Redis, except that their
/// existence is asked of their own slots between the steps, and dropped from the count only
/// where their expiry score has not changed meanwhile (a new commit changes it). A delete
/// takes the session off the count after it, the same way.
struct RedisTenantReservations: Sendable {
    let quotas: RedisTenantQuotas

    /// A reserved commit, to be settled.
    struct Reservation {
        let id: String
        let keys: [[UInt8]]
        let nonce: String
        /// Sessions whose expiry score had passed: their id and that score.
        let expired: [(id: String, score: String)]
    }

    /// The tenant's keys, tagged by the tenant so that they share its slot; nil where `id` has
    /// no tenant (it is not counted).
    private func keys(_ id: String) -> [[UInt8]]? {
        guard let tenant = SessionNamespace.tenant(of: id) else { return nil }
        let base = "\(quotas.layout.prefix)tenant:{\(tenant)}:"
        return ["sizes", "expiries", "reserved"].map { Array((base + $0).utf8) }
    }

    /// Counts the commit of `id` at `footprint` bytes, or throws the refusal `RedisTenantQuotas`
    /// would (after looking at the tenant's expired sessions once, as they may free room); nil
    /// where `id` has no tenant.
    func reserve(
        _ id: String, footprint: Int, ttl: String, run: ([[RedisArgument]]) throws(SessionError) -> [RedisValue]
    ) throws(SessionError) -> Reservation? {
        guard let keys = keys(id) else { return nil }
        var generator = SystemRandomNumberGenerator()
        let nonce = String(generator.next(), radix: 36)
        for attempt in 0..<2 {
            let arguments = [id, String(footprint), String(quotas.maxSessions), String(quotas.maxBytes), ttl, nonce].map(RedisArgument.text)
            let reply = try run([Self.script(Self.reserve, keys, arguments)])[0].array ?? []
            let expired = Self.expired(reply.last)
            guard reply.first?.integer == RedisTenantQuotas.refused else { return Reservation(id: id, keys: keys, nonce: nonce, expired: expired) }
            guard attempt == 0, !expired.isEmpty else { throw RedisTenantQuotas.refusal(reply) }
            try sweep(keys, expired, run: run)
        }
        throw .internalFailure("a reservation was neither made nor refused")
    }

    /// Puts a commit's count back where it did not happen, and drops the expired sessions found.
    func settle(_ reservation: Reservation, committed: Bool, run: ([[RedisArgument]]) throws(SessionError) -> [RedisValue]) {
        let gone = (try? checked(reservation.expired, run: run)) ?? []
        let arguments = [reservation.id, reservation.nonce, committed ? "1" : "0"].map(RedisArgument.text) + gone
        _ = try? run([Self.script(Self.settle, reservation.keys, arguments)])
    }

    /// Takes `id` off its tenant's count after it was deleted (or found absent), unless a
    /// commit has counted it again since `score` (its expiry score before the delete).
    func released(_ id: String, score: String?, run: ([[RedisArgument]]) throws(SessionError) -> [RedisValue]) {
        guard let keys = keys(id) else { return }
        _ = try? run([Self.script(Self.sweep, keys, [.text("gone"), .text(id), .text(score ?? "")])])
    }

    /// `id`'s expiry score now, to be given to `released`.
    func score(_ id: String, run: ([[RedisArgument]]) throws(SessionError) -> [RedisValue]) -> String? {
        guard let keys = keys(id) else { return nil }
        return (try? run([["ZSCORE", .bytes(keys[1]), .text(id)]]))?.first?.bytes.map { String(decoding: $0, as: UTF8.self) }
    }

    private func sweep(_ keys: [[UInt8]], _ expired: [(id: String, score: String)], run: ([[RedisArgument]]) throws(SessionError) -> [RedisValue])
        throws(SessionError)
    {
        _ = try run([Self.script(Self.sweep, keys, try checked(expired, run: run))])
    }

    /// For each expired session, whether it is gone or its time left, asked of its own slot:
    /// `sweep`'s arguments.
    private func checked(_ expired: [(id: String, score: String)], run: ([[RedisArgument]]) throws(SessionError) -> [RedisValue])
        throws(SessionError) -> [RedisArgument]
    {
        guard !expired.isEmpty else { return [] }
        let left = try run(expired.map { ["PTTL", .bytes(quotas.layout.key($0.id))] })
        var arguments: [RedisArgument] = []
        for (session, pttl) in zip(expired, left) {
            let remaining = pttl.integer ?? -2
            arguments += [.text(remaining < 0 ? "gone" : String(remaining)), .text(session.id), .text(session.score)]
        }
        return arguments
    }

    private static func expired(_ reply: RedisValue?) -> [(id: String, score: String)] {
        let values = reply?.array ?? []
        return stride(from: 0, to: values.count - 1, by: 2).compactMap { index in
            guard let id = values[index].bytes, let score = values[index + 1].bytes else { return nil }
            return (String(decoding: id, as: UTF8.self), String(decoding: score, as: UTF8.self))
        }
    }

    private static func script(_ text: String, _ keys: [[UInt8]], _ arguments: [RedisArgument]) -> [RedisArgument] {
        ["EVAL", .text(text), "3"] + keys.map(RedisArgument.bytes) + arguments
    }

    /// KEYS: the tenant's sizes, expiries and reservations. The time now in ms, and a
    /// session's count taken off.
    private static let common = """
        local sizes, expiries, reserved = KEYS[1], KEYS[2], KEYS[3]
        \(RedisTenantQuotas.counting(reserved: true))
        -- `sweep`'s triples from ARGV[from] on: each session whose score is still the one seen
        -- ("" for none) is taken off the count where it is gone, else scored by its time left.
        local function swept(from)
          for i = from, #ARGV - 2, 3 do
            local score = redis.call('ZSCORE', expiries, ARGV[i + 1])
            if score == ARGV[i + 2] or (ARGV[i + 2] == '' and not score) then
              if ARGV[i] == 'gone' then uncount(ARGV[i + 1])
              else redis.call('ZADD', expiries, now + tonumber(ARGV[i]), ARGV[i + 1]) end
            end
          end
          if redis.call('HLEN', sizes) <= 1 then redis.call('DEL', sizes) end
        end

        """

    /// ARGV: triples of "gone" or the ms left, a session, the expiry score it was seen with.
    private static let sweep =
        common + """
            swept(1)
            return 0
            """

    /// ARGV: the session, its footprint after the commit, the tenant's most sessions and most
    /// bytes, the idle timeout in ms, the nonce. Returns {-3, 0 or 1, the limit, expired} where
    /// the commit would take the tenant past a quota (as `RedisTenantQuotas`), else {1,
    /// expired}: expired being up to 64 sessions whose expiry score has passed, with their
    /// scores.
    private static let reserve =
        common + """
            local id, bytes, most, mostBytes, ttl, nonce = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
            local expired = redis.call('ZRANGEBYSCORE', expiries, '-inf', now, 'WITHSCORES', 'LIMIT', 0, 64)
            local had = redis.call('HGET', sizes, id)
            local before = tonumber(had or '0')
            local total = tonumber(redis.call('HGET', sizes, '') or '0')
            local count = redis.call('HLEN', sizes) - redis.call('HEXISTS', sizes, '')
            if not had and count >= most then return {\(RedisTenantQuotas.refused), 0, most, expired} end
            if bytes > before and total - before + bytes > mostBytes then return {\(RedisTenantQuotas.refused), 1, mostBytes, expired} end
            redis.call('HSET', sizes, id, bytes)
            redis.call('HINCRBY', sizes, '', bytes - before)
            redis.call('ZADD', expiries, now + ttl, id)
            redis.call('HSET', reserved, id, nonce .. ' ' .. (had or '-'))
            return {1, expired}
            """

    /// ARGV: the session, the nonce, "1" where the commit happened (else "0"), then `sweep`'s
    /// triples. A commit that did not happen, whose reservation is still the session's last,
    /// has the session counted as it was before.
    private static let settle =
        common + """
            local id, nonce = ARGV[1], ARGV[2]
            local mark = redis.call('HGET', reserved, id)
            if mark and string.sub(mark, 1, #nonce + 1) == nonce .. ' ' then
              redis.call('HDEL', reserved, id)
              if ARGV[3] == '0' then
                local before = string.sub(mark, #nonce + 2)
                local counted = tonumber(redis.call('HGET', sizes, id) or '0')
                if before == '-' then
                  redis.call('HDEL', sizes, id)
                  redis.call('ZREM', expiries, id)
                  redis.call('HINCRBY', sizes, '', -counted)
                else
                  redis.call('HSET', sizes, id, before)
                  redis.call('HINCRBY', sizes, '', tonumber(before) - counted)
                end
              end
            end
            swept(4)
            return 0
            """
}
