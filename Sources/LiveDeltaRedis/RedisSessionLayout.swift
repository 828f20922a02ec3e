import LiveDeltaService

/// How a session is kept in Redis: one hash per session, `<prefix>{<id>}`, with a
/// `StoredSession`'s version (`v`), options (`o`), collection (`d`) and incarnation (`g`). The
/// `{id}` hash tag keeps the session and the key a new value is written to beside it in one
/// cluster slot.
struct RedisSessionLayout: Sendable {
    let prefix: String

    func key(_ id: String) -> [UInt8] { Array("\(prefix){\(id)}".utf8) }

    /// The session's log of steps, a stream, kept while someone follows it.
    func logKey(_ id: String) -> [UInt8] { Array("\(prefix){\(id)}:log".utf8) }

    /// Present (with a short expiry, refreshed) while some replica has live subscribers of the
    /// session: commits log their steps only then.
    func followKey(_ id: String) -> [UInt8] { Array("\(prefix){\(id)}:followed".utf8) }

    /// The channel on which commits to followed sessions announce their ids.
    var channel: String { "\(prefix)live" }

    /// Where a new value is written before the commit script swaps it in.
    func nextKey(_ id: String) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return Array("\(prefix){\(id)}:next:\(String(generator.next(), radix: 36))".utf8)
    }
}

/// The scripts that make a session's changes atomic in Redis: each checks the version it was
/// given against the stored one, in Redis's single thread, before it writes.
enum RedisScripts {
    /// KEYS: the session, the new collection written beside it, its log, its followed mark.
    /// ARGV: the version expected (a
    /// number; "" for a session that must not exist yet; "*" for any), the incarnation expected
    /// with a number, the idle timeout in ms, the new version, the new incarnation, "1" to keep
    /// the new collection where the commit does not happen (it is staged, and may be tried
    /// again) or "0" to drop it, the options, the step (`StoredStep`), the log's length, the
    /// channel, the id. Where the session is followed, the step is logged (the session after
    /// it, whole) and the id announced. Returns {1, the version replaced or ""} where the
    /// new value took the session's place, {0, current version or ""} where the stored session
    /// was not the one expected, {-1} where the new collection is gone (expired, or Redis
    /// restarted).
    static let commit = """
        local current = redis.call('HMGET', KEYS[1], 'v', 'g')
        local expected = ARGV[1]
        local matches
        if expected == '' then matches = not current[1]
        elseif expected == '*' then matches = true
        else matches = current[1] == expected and current[2] == ARGV[2] end
        if not matches then
          if ARGV[6] ~= '1' then redis.call('DEL', KEYS[2]) end
          return {0, current[1] or ''}
        end
        if redis.call('EXISTS', KEYS[2]) == 0 then return {-1} end
        redis.call('HSET', KEYS[2], 'v', ARGV[4], 'g', ARGV[5], 'o', ARGV[7])
        redis.call('RENAME', KEYS[2], KEYS[1])
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        if redis.call('EXISTS', KEYS[4]) == 1 then
          redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[9], '*', 'k', ARGV[8], 'g', ARGV[5], 'v', ARGV[4],
            'b', current[1] or '', 'o', ARGV[7], 'd', redis.call('HGET', KEYS[1], 'd'))
          redis.call('PEXPIRE', KEYS[3], ARGV[3])
          redis.call('PUBLISH', ARGV[10], ARGV[11])
        end
        return {1, current[1] or ''}
        """

    /// KEYS: the session, its log, its followed mark. ARGV: the version expected (a number, or
    /// "*"), the channel, the id. Returns {1} where it was deleted (logged and announced where
    /// followed), {0, current version} where the version did not match, {-1} where there is no
    /// such session.
    static let delete = """
        local current = redis.call('HMGET', KEYS[1], 'v', 'g')
        if not current[1] then return {-1} end
        if ARGV[1] ~= '*' and current[1] ~= ARGV[1] then return {0, current[1]} end
        redis.call('DEL', KEYS[1])
        if redis.call('EXISTS', KEYS[3]) == 1 then
          redis.call('XADD', KEYS[2], 'MAXLEN', '~', '1000', '*', 'k', 'e', 'g', current[2] or '', 'v', current[1], 'b', '', 'o', '', 'd', '')
          redis.call('PUBLISH', ARGV[2], ARGV[3])
        end
        return {1}
        """
}
