import ByteJSON
import MicroHTTP

/// A session as bytes, for storage shared by replicas, and back.
enum SessionCodec {
    /// A new incarnation token.
    static func newIncarnation() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 36)
    }

    /// Options as a JSON object.
    static func encode(_ options: DiffOptions) -> [UInt8] {
        var writer = JSONWriter()
        writer.options(options)
        return writer.bytes
    }

    /// A collection as a body would send it: its items' (or sections') own text.
    static func encode(_ collection: JSONCollection) -> [UInt8] {
        switch collection {
        case .flat(let items): join(items.map(\.text), open: "[", close: "]")
        case .sectioned(let sections): join(sections.map(\.text), open: "{\"sections\":[", close: "]}")
        }
    }

    /// Texts joined by commas between `open` and `close`, in one buffer sized once (a session's
    /// text is large, and growing it by doubling would copy it again).
    private static func join(_ texts: [UnsafeBufferPointer<UInt8>], open: StaticString, close: StaticString) -> [UInt8] {
        var data = JSONWriter(capacity: texts.reduce(open.utf8CodeUnitCount + close.utf8CodeUnitCount) { $0 + $1.count + 1 })
        data.raw(open)
        for (index, text) in texts.enumerated() {
            if index > 0 { data.raw(",") }
            data.raw(text)
        }
        data.raw(close)
        return data.bytes
    }

    /// A stored session, parsed.
    static func decode(id: String, _ stored: StoredSession) throws(SessionError) -> HeldSession {
        let (version, options, data) = (stored.version, stored.options, stored.data)
        let parsed: DiffOptions
        let collection: JSONCollection
        do throws(APIError) {
            parsed = try DiffOptions(try parseOptions(options), at: JSONPointer("options"))
            collection = try CollectionDocument.read(ByteBuffer(data), options: parsed, limits: ReadLimits(maxDepth: 1_000, maxItems: .max))
        } catch {
            throw .storeUnavailable("the stored session \(id) cannot be read: \(error.message)")
        }
        let holder = try SessionRules.holder(for: collection, options: parsed, version: version)
        return HeldSession(id: id, options: parsed, holder: holder, now: 0)
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

