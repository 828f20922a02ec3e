import LiveDeltaService

/// How a session is kept in Redis: one hash per session, `<prefix>{<id>}`, with a
/// `StoredSession`'s version (`v`), options (`o`) and incarnation (`g`), and its collection in
/// parts (`StoredPart`): the shape (`s`), the manifest (`m`: each part's name and unit count,
/// in order, `name:count,name:count`) and each part's text (`p<name>`: its units joined by
/// commas); a sectioned collection's item count too (`n`, `itemCount`), as its parts count
/// sections; and beside each part the hashes of its units' ids (`h<name>`, `idsField`), by
/// which a window anchored by id finds the part that holds its anchor.
/// A change rewrites the parts it touches, the manifest and the count. A session
/// stored whole by an earlier version has its collection in `d` instead, and gets parts at its
/// next commit. The `{id}` hash tag keeps the session and the key a new value is written to
/// beside it in one cluster slot.
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

    /// The hash field of a part's text.
    static func field(_ name: String) -> [UInt8] { Array("p\(name)".utf8) }

    /// The hash field of a part's units' id hashes (`PartPlan.writtenIDs`).
    static func idsField(_ name: String) -> [UInt8] { Array("h\(name)".utf8) }

    /// The manifest's text.
    static func manifest(_ parts: [StoredPart]) -> [UInt8] {
        Array(parts.map { "\($0.name):\($0.count)" }.joined(separator: ",").utf8)
    }

    /// The `n` field: a sectioned collection's item count, with its manifest's hash (FNV-1a), so
    /// that a count left beside another manifest (by a server that wrote none) is never taken
    /// for this one's.
    static func itemCount(_ items: Int, manifest: [UInt8]) -> [UInt8] {
        Array("\(items):\(String(hash(manifest), radix: 36))".utf8)
    }

    /// The item count an `n` field gives for `manifest`; nil where it gives none for it.
    static func itemCount(_ field: [UInt8]?, manifest: [UInt8]) -> Int? {
        guard let field, let colon = field.firstIndex(of: UInt8(ascii: ":")),
            String(decoding: field[(colon + 1)...], as: UTF8.self) == String(hash(manifest), radix: 36)
        else { return nil }
        return Int(String(decoding: field[..<colon], as: UTF8.self))
    }

    private static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }

    /// The parts a manifest (`name:count,name:count`, counts in decimal digits) names (`bytes`
    /// left 0); nil where it is not one. In one walk of the bytes: a million items' manifest
    /// names some 5,000 parts, read with every window a replica with no copy answers, and
    /// split into pieces first (an array and references for each) it took a third of such a
    /// read's CPU.
    static func parts(_ manifest: [UInt8]) -> [StoredPart]? {
        manifest.withUnsafeBufferPointer { bytes -> [StoredPart]? in
            var parts: [StoredPart] = []
            parts.reserveCapacity(bytes.count / 8)
            var start = 0
            while start < bytes.count {
                var colon = start
                while colon < bytes.count, bytes[colon] != UInt8(ascii: ":"), bytes[colon] != UInt8(ascii: ",") { colon += 1 }
                guard colon > start, colon < bytes.count, bytes[colon] == UInt8(ascii: ":") else { return nil }
                var end = colon + 1
                var count = 0
                while end < bytes.count, bytes[end] != UInt8(ascii: ",") {
                    let digit = bytes[end] &- UInt8(ascii: "0")
                    let (times, over) = count.multipliedReportingOverflow(by: 10)
                    guard digit < 10, !over, times <= Int.max - Int(digit) else { return nil }
                    count = times + Int(digit)
                    end += 1
                }
                guard count > 0 else { return nil }
                let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<colon]), as: UTF8.self)
                parts.append(StoredPart(name: name, count: count, bytes: 0))
                // A comma ends the manifest only where nothing follows it: not one.
                if end == bytes.count { return parts }
                start = end + 1
            }
            return bytes.isEmpty ? [] : nil
        }
    }
}

/// A script's text, and the same run for a write under an `Idempotency-Key`
/// (`RedisScripts.held`), for a session of a tenant whose quotas it counts
/// (`RedisTenantQuotas`), and both; each of them also announcing on a sharded channel
/// (`SPUBLISH`, on a cluster). All made once.
struct RedisScript: Sendable {
    /// By `held`, `counted`, `sharded` as bits 0, 1, 2.
    private let texts: [String]

    /// `counting`: how the script's run is counted against its tenant's quotas.
    init(counting: (String) -> String, _ text: String) {
        let sharded = text.replacing("redis.call('PUBLISH',", with: "redis.call('SPUBLISH',")
        texts = [text, sharded].flatMap { text in
            [text, RedisScripts.held(text), counting(text), RedisScripts.held(counting(text))]
        }
    }

    func text(held: Bool, counted: Bool, sharded: Bool) -> String {
        texts[(held ? 1 : 0) + (counted ? 2 : 0) + (sharded ? 4 : 0)]
    }
}

/// The scripts that make a session's changes atomic in Redis: each checks the version it was
/// given against the stored one, in Redis's single thread, before it writes.
enum RedisScripts {
    /// Lua shared by the scripts: commands over long lists in chunks (Lua's `unpack` has a
    /// limit), and a committed step logged and announced where the session is followed. A step
    /// logs `k` (its kind), `g`, `v`, `b` (the version before) and `o`, and then either what it
    /// changed (`m` the manifest after, `q` the one before, each part written as `p<name>` with
    /// its text, each part dropped as `x<name>` with the text it had), or a small collection
    /// written whole as `d`, or `r`: read the session (a large collection written whole, or too
    /// many parts changed to log in one entry). A large session is never logged whole: on a
    /// session of a million items, copying it into the log took Redis past a second a commit,
    /// and every client waited.
    private static let common = """
        local function chunked(command, key, list)
          for i = 1, #list, 1000 do redis.call(command, key, unpack(list, i, math.min(i + 999, #list))) end
        end
        local function document(key)
          local stored = redis.call('HMGET', key, 's', 'm')
          local names, texts = {}, {}
          for name in string.gmatch(stored[2] or '', '([^:,]+):') do names[#names + 1] = 'p' .. name end
          for i = 1, #names, 1000 do
            for _, text in ipairs(redis.call('HMGET', key, unpack(names, i, math.min(i + 999, #names)))) do texts[#texts + 1] = text end
          end
          if stored[1] == 's' then return '{"sections":[' .. table.concat(texts, ',') .. ']}' end
          return '[' .. table.concat(texts, ',') .. ']'
        end
        local function logged(log, ttl, length, channel, id, entry)
          redis.call('XADD', log, 'MAXLEN', '~', length, '*', unpack(entry))
          redis.call('PEXPIRE', log, ttl)
          redis.call('PUBLISH', channel, id)
        end

        """

    /// Replaces the session with a collection written whole beside it.
    /// KEYS: the session, the new collection written beside it, its log, its followed mark.
    /// ARGV: the version expected (a
    /// number; "" for a session that must not exist yet; "*" for any), the incarnation expected
    /// with a number, the idle timeout in ms, the new version, the new incarnation, "1" to keep
    /// the new collection where the commit does not happen (it is staged, and may be tried
    /// again) or "0" to drop it, the options, the step (`StoredStep`), the log's length, the
    /// channel, the id, "1" to log the collection whole (it is small) or "0" to log that it is to
    /// be read. Where the session is followed, the step is logged and the id announced. Returns {1, the version replaced or ""} where the
    /// new value took the session's place, {0, current version or ""} where the stored session
    /// was not the one expected, {-1} where the new collection is gone (expired, or Redis
    /// restarted).
    static let commit = RedisScript(
        counting: RedisTenantQuotas.counting,
        common + """
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
              logged(KEYS[3], ARGV[3], ARGV[9], ARGV[10], ARGV[11],
                {'k', ARGV[8], 'g', ARGV[5], 'v', ARGV[4], 'b', current[1] or '', 'o', ARGV[7],
                 ARGV[12] == '1' and 'd' or 'r', ARGV[12] == '1' and document(KEYS[1]) or '1'})
            end
            return {1, current[1] or ''}
            """)

    /// Changes the parts of the session's collection in place.
    /// KEYS: the session, its log, its followed mark. ARGV: the version expected and its
    /// incarnation, the idle timeout in ms, the new version, the options, the step, the log's
    /// length, the channel, the id, the new manifest, the number n of parts dropped, the item
    /// count (`n`; "" for a flat collection), the number k of parts written with their ids'
    /// hashes, n fields of parts dropped (their ids' hashes go with them), k times a field of
    /// ids' hashes and its value, then each part written: its field, its text. Returns {1, the
    /// version replaced} where committed, {0, current version or ""} where the stored session
    /// was not the one expected.
    static let patch = RedisScript(
        counting: RedisTenantQuotas.counting,
        common + """
            local current = redis.call('HMGET', KEYS[1], 'v', 'g', 'm')
            if current[1] ~= ARGV[1] or current[2] ~= ARGV[2] then return {0, current[1] or ''} end
            local dropped, indexed = tonumber(ARGV[11]), tonumber(ARGV[13])
            local fields, values, ids = {}, {'v', ARGV[4], 'o', ARGV[5], 'm', ARGV[10]}, {}
            for i = 14, 13 + dropped do fields[#fields + 1] = ARGV[i] end
            for i = 14 + dropped, 13 + dropped + 2 * indexed do ids[#ids + 1] = ARGV[i] end
            for i = 14 + dropped + 2 * indexed, #ARGV do values[#values + 1] = ARGV[i] end
            local entry
            if redis.call('EXISTS', KEYS[3]) == 1 then
              entry = {'k', ARGV[6], 'g', current[2], 'v', ARGV[4], 'b', current[1], 'o', ARGV[5]}
              -- An entry's fields go to XADD through unpack, which takes some 8,000 values.
              local changes = {}
              if current[3] and #fields + (#values - 6) / 2 <= 3000 then
                changes = {'m', ARGV[10], 'q', current[3]}
                for i = 1, #fields, 1000 do
                  local texts = redis.call('HMGET', KEYS[1], unpack(fields, i, math.min(i + 999, #fields)))
                  for j = 1, #texts do
                    if not texts[j] then changes = nil break end
                    changes[#changes + 1] = 'x' .. string.sub(fields[i + j - 1], 2)
                    changes[#changes + 1] = texts[j]
                  end
                  if not changes then break end
                end
              else
                changes = nil
              end
              if changes then
                for i = 7, #values do changes[#changes + 1] = values[i] end
              else
                changes = {'r', '1'}
              end
              for i = 1, #changes do entry[#entry + 1] = changes[i] end
            end
            local dropIDs = {}
            for i = 1, #fields do dropIDs[i] = 'h' .. string.sub(fields[i], 2) end
            chunked('HDEL', KEYS[1], fields)
            chunked('HDEL', KEYS[1], dropIDs)
            chunked('HSET', KEYS[1], values)
            chunked('HSET', KEYS[1], ids)
            if ARGV[12] ~= '' then redis.call('HSET', KEYS[1], 'n', ARGV[12]) end
            redis.call('PEXPIRE', KEYS[1], ARGV[3])
            if entry then logged(KEYS[2], ARGV[3], ARGV[7], ARGV[8], ARGV[9], entry) end
            return {1, current[1]}
            """)

    /// `script` run for a write under an `Idempotency-Key`: KEYS and ARGV are the script's, then
    /// the key's ledger entry, and ARGV the claim it must hold (or nothing, its claim having
    /// lapsed with no one taking it), the committed mark and its lifetime in ms. Returns {-2}
    /// without writing where another claim holds the key; else the script's answer, having
    /// marked the key committed where that answer is {1, ...} (the write took place).
    static func held(_ script: String) -> String {
        """
        local function write(KEYS, ARGV)
        \(script)
        end
        local n, m = #KEYS - 1, #ARGV - 3
        local entry = redis.call('GET', KEYS[#KEYS])
        if entry and entry ~= ARGV[m + 1] then return {-2} end
        local keys, argv = {}, {}
        for i = 1, n do keys[i] = KEYS[i] end
        for i = 1, m do argv[i] = ARGV[i] end
        local result = write(keys, argv)
        if result[1] == 1 then redis.call('SET', KEYS[#KEYS], ARGV[m + 2], 'PX', ARGV[m + 3]) end
        return result
        """
    }

    /// KEYS: the session, its log, its followed mark. ARGV: the version expected (a number, or
    /// "*"), the channel, the id. Returns {1} where it was deleted (logged and announced where
    /// followed), {0, current version} where the version did not match, {-1} where there is no
    /// such session.
    static let delete = RedisScript(
        counting: RedisTenantQuotas.releasing,
        """
        local current = redis.call('HMGET', KEYS[1], 'v', 'g')
        if not current[1] then return {-1} end
        if ARGV[1] ~= '*' and current[1] ~= ARGV[1] then return {0, current[1]} end
        redis.call('DEL', KEYS[1])
        if redis.call('EXISTS', KEYS[3]) == 1 then
          redis.call('XADD', KEYS[2], 'MAXLEN', '~', '1000', '*', 'k', 'e', 'g', current[2] or '', 'v', current[1], 'b', '', 'o', '', 'd', '')
          redis.call('PUBLISH', ARGV[2], ARGV[3])
        end
        return {1}
        """)
}
