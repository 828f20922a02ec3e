import LiveDeltaService
import RedisClient

/// Each tenant's sessions and their bytes, counted in Redis by the scripts that commit and
/// delete, so that every replica's writes meet one count and a quota holds however many
/// replicas write at once.
///
/// Two keys a tenant (ids without a tenant, where tokens are not checked, are not counted):
/// `<prefix>tenant:<tenant>:sizes`, a hash of each counted session's store id to the bytes it
/// takes (`SessionFootprint`, as the memory store counts them) with their sum under the field
/// "" (no store id is empty); and `<prefix>tenant:<tenant>:expiries`, a sorted set of the same
/// ids scored by the time (ms) their idle timeout would end had nothing read them since their
/// last commit. Sessions leave the count when they are deleted, and, since Redis drops an idle
/// session without telling anyone, when a later commit of the tenant finds them gone: each
/// commit looks at (at most 64 of) the sessions whose score has passed, drops those Redis no
/// longer holds and scores the others again by their TTL. A session Redis itself evicted
/// (`maxmemory`) is found the same way once its score passes, so until then it still counts:
/// the count errs towards refusing, never towards letting a tenant past its quota.
struct RedisTenantQuotas: Sendable {
    let maxSessions: Int
    let maxBytes: Int
    let layout: RedisSessionLayout

    /// What the counting wrappers add to a script's keys and arguments for the session `id`;
    /// nil where `id` has no tenant.
    func account(_ id: String, footprint: Int, ttl: String) -> (keys: [[UInt8]], arguments: [RedisArgument])? {
        guard let tenant = SessionNamespace.tenant(of: id) else { return nil }
        let base = "\(layout.prefix)tenant:\(tenant):"
        return (
            [Array((base + "sizes").utf8), Array((base + "expiries").utf8)],
            [id, String(footprint), String(maxSessions), String(maxBytes), ttl, layout.prefix].map(RedisArgument.text)
        )
    }

    /// What a counting script answers where the commit would take the tenant past a quota:
    /// `{-3, 0 (sessions) or 1 (bytes), the limit}`.
    static let refused = -3

    /// Lua: `now`, the time in ms, and `uncount(other)`, which takes a session off the count in
    /// `sizes` and `expiries` (and `reserved`, where there is one: a cluster's reservations).
    static func counting(reserved: Bool) -> String {
        """
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        local function uncount(other)
          local size = redis.call('HGET', sizes, other)
          if size then
            redis.call('HINCRBY', sizes, '', -tonumber(size))
            redis.call('HDEL', sizes, other)
          end
          redis.call('ZREM', expiries, other)\(reserved ? "\n  redis.call('HDEL', reserved, other)" : "")
        end

        """
    }

    /// Lua shared by the wrappers: the tenant's keys and arguments taken off the end, and the
    /// sessions that may have expired looked at again.
    private static let prologue = """
        local n, m = #KEYS - 2, #ARGV - 6
        local sizes, expiries = KEYS[n + 1], KEYS[n + 2]
        local id, ttl, prefix = ARGV[m + 1], tonumber(ARGV[m + 5]), ARGV[m + 6]
        local keys, argv = {}, {}
        for i = 1, n do keys[i] = KEYS[i] end
        for i = 1, m do argv[i] = ARGV[i] end
        \(counting(reserved: false))
        for _, other in ipairs(redis.call('ZRANGEBYSCORE', expiries, '-inf', now, 'LIMIT', 0, 64)) do
          local left = redis.call('PTTL', prefix .. '{' .. other .. '}')
          if left < 0 then uncount(other) else redis.call('ZADD', expiries, now + left, other) end
        end

        """

    /// `script` (a commit) run only where the session fits its tenant's quotas, and counted
    /// where it commits. KEYS: the script's, then the tenant's sizes and expiries; ARGV: the
    /// script's, then the session's store id, its footprint after the commit, the tenant's most
    /// sessions and most bytes, the idle timeout in ms, the key prefix. Returns `refused`'s
    /// answer without running the script, else the script's answer.
    static func counting(_ script: String) -> String {
        """
        local function write(KEYS, ARGV)
        \(script)
        end
        \(prologue)
        local bytes, most, mostBytes = tonumber(ARGV[m + 2]), tonumber(ARGV[m + 3]), tonumber(ARGV[m + 4])
        local had = redis.call('HGET', sizes, id)
        local before = tonumber(had or '0')
        local total = tonumber(redis.call('HGET', sizes, '') or '0')
        local count = redis.call('HLEN', sizes) - redis.call('HEXISTS', sizes, '')
        if not had and count >= most then return {\(refused), 0, most} end
        if bytes > before and total - before + bytes > mostBytes then return {\(refused), 1, mostBytes} end
        local result = write(keys, argv)
        if result[1] == 1 then
          redis.call('HSET', sizes, id, bytes)
          redis.call('HINCRBY', sizes, '', bytes - before)
          redis.call('ZADD', expiries, now + ttl, id)
        end
        return result
        """
    }

    /// `script` (a delete) with the session taken off its tenant's count where it is gone
    /// after it (deleted, or found absent). KEYS and ARGV as `counting`'s.
    static func releasing(_ script: String) -> String {
        """
        local function write(KEYS, ARGV)
        \(script)
        end
        \(prologue)
        local result = write(keys, argv)
        if result[1] == 1 or result[1] == -1 then uncount(id) end
        if redis.call('HLEN', sizes) <= 1 then redis.call('DEL', sizes) end
        return result
        """
    }

    /// The error a refusal answer stands for.
    static func refusal(_ reply: [RedisValue]) -> SessionError {
        let bytes = reply.count > 1 && reply[1].integer == 1
        let limit = reply.count > 2 ? reply[2].integer ?? 0 : 0
        return .tenantFull(limit: limit, bytes: bytes)
    }
}
