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

