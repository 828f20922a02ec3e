import ByteJSON
import MicroHTTP

/// How a session is kept in Redis: one hash per session, `<prefix>{<id>}`, with its version
/// (`v`), options (`o`), collection (`d`, JSON as a body would send it) and incarnation (`g`: a
/// random token each time the session is created or replaced, since versions start again at 0
/// then, and a version alone could match a copy of an earlier life). The `{id}` hash tag
/// keeps the session and the key a new value is written to beside it in one cluster slot.
struct RedisSessionLayout: Sendable {
    let prefix: String

    func key(_ id: String) -> [UInt8] { Array("\(prefix){\(id)}".utf8) }

    static func newIncarnation() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 36)
    }

    /// Where a new value is written before the commit script swaps it in.
    func nextKey(_ id: String) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return Array("\(prefix){\(id)}:next:\(String(generator.next(), radix: 36))".utf8)
    }

    /// Options as the hash's `o` field.
    static func encode(_ options: DiffOptions) -> [UInt8] {
        var writer = JSONWriter()
        writer.options(options)
        return writer.bytes
    }

    /// A collection as a body would send it: its items' (or sections') own text.
    static func encode(_ collection: JSONCollection) -> [UInt8] {
        // Sized once: a session's text is large, and growing it by doubling copies it again.
        let size = switch collection {
        case .flat(let items): items.reduce(2) { $0 + $1.text.count + 1 }
        case .sectioned(let sections): sections.reduce(16) { $0 + $1.text.count + 1 }
        }
        var data = JSONWriter(capacity: size)
        switch collection {
        case .flat(let items):
            data.raw("[")
            for (index, item) in items.enumerated() {
                if index > 0 { data.raw(",") }
                data.raw(item.text)
            }
            data.raw("]")
        case .sectioned(let sections):
            data.raw("{\"sections\":[")
            for (index, section) in sections.enumerated() {
                if index > 0 { data.raw(",") }
                data.raw(section.text)
            }
            data.raw("]}")
        }
        return data.bytes
    }

    /// A session read back from its fields, at `version`.
    static func decode(id: String, version: UInt64, options: [UInt8], data: [UInt8], now: UInt64) throws(SessionError) -> HeldSession {
        let parsed: DiffOptions
        let collection: JSONCollection
        do throws(APIError) {
            parsed = try DiffOptions(try parseOptions(options), at: JSONPointer("options"))
            collection = try CollectionDocument.read(ByteBuffer(data), options: parsed, limits: ReadLimits(maxDepth: 1_000, maxItems: .max))
        } catch {
            throw .storeUnavailable("the stored session \(id) cannot be read: \(error.message)")
        }
        let holder = try SessionRules.holder(for: collection, options: parsed, version: version)
        return HeldSession(id: id, options: parsed, holder: holder, now: now)
    }
}

/// Options as stored: a small JSON object.
func parseOptions(_ bytes: [UInt8]) throws(APIError) -> JSONValue {
    do {
        return try bytes.withUnsafeBufferPointer { buffer throws(JSONError) in try JSONValue(parsing: buffer, maxDepth: 16) }
    } catch {
        throw .malformedJSON(error)
    }
}

/// The scripts that make a session's changes atomic in Redis: each checks the version it was
/// given against the stored one, in Redis's single thread, before it writes.
enum RedisScripts {
    /// KEYS: the session, the new value written beside it. ARGV: the version expected (a
    /// number; "" for a session that must not exist yet; "*" for any), the incarnation expected
    /// with a number, the idle timeout in ms. Returns {1, the version replaced or ""} where the
    /// new value took the session's place, {0, current version or ""} where the stored session
    /// was not the one expected (the new value is dropped).
    static let commit = """
        local current = redis.call('HMGET', KEYS[1], 'v', 'g')
        local expected = ARGV[1]
        local matches
        if expected == '' then matches = not current[1]
        elseif expected == '*' then matches = true
        else matches = current[1] == expected and current[2] == ARGV[2] end
        if not matches then
          redis.call('DEL', KEYS[2])
          return {0, current[1] or ''}
        end
        redis.call('RENAME', KEYS[2], KEYS[1])
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        return {1, current[1] or ''}
        """

    /// KEYS: the session. ARGV: the version expected (a number, or "*"). Returns {1} where it
    /// was deleted, {0, current version} where the version did not match, {-1} where there is
    /// no such session.
    static let delete = """
        local current = redis.call('HGET', KEYS[1], 'v')
        if not current then return {-1} end
        if ARGV[1] ~= '*' and current ~= ARGV[1] then return {0, current} end
        redis.call('DEL', KEYS[1])
        return {1}
        """
}
