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
        let (shape, pieces) = PartPlanner.text(of: collection)
        var data = JSONWriter(capacity: pieces.reduce(shape.opening.utf8CodeUnitCount + shape.closing.utf8CodeUnitCount) { $0 + $1.count })
        data.raw(shape.opening)
        for piece in pieces { data.raw(piece.assumingMemoryBound(to: UInt8.self)) }
        data.raw(shape.closing)
        return data.bytes
    }

    /// A stored session, parsed.
    static func decode(id: String, _ stored: StoredSession) throws(SessionError) -> OpenSession {
        let version = stored.version
        let (parsed, collection) = try read(id: id, options: stored.options, data: stored.data)
        let holder = try SessionRules.holder(for: collection, options: parsed, version: version)
        let session = OpenSession(id: id, incarnation: stored.incarnation, options: parsed, holder: holder, owners: collection.owners, now: 0)
        // Parts that do not match what was read are forgotten: the next commit writes anew.
        session.storedParts = stored.parts.flatMap { PartPlanner.counted($0, in: collection) }
        return session
    }

    /// Some of a stored session's rows, parsed.
    static func decode(id: String, _ stored: StoredUnits) throws(SessionError) -> SessionRows {
        let (options, collection) = try read(id: id, options: stored.options, data: stored.data)
        let snapshot = SessionSnapshot(id: id, incarnation: stored.incarnation, options: options, version: stored.version, collection: collection)
        return SessionRows(snapshot: snapshot, first: stored.first, count: stored.count, items: stored.items)
    }

    private static func read(id: String, options: [UInt8], data: [UInt8]) throws(SessionError) -> (DiffOptions, JSONCollection) {
        do throws(APIError) {
            let parsed = try DiffOptions(try parseOptions(options), at: JSONPointer("options"))
            return (parsed, try CollectionDocument.read(ByteBuffer(data), options: parsed, limits: ReadLimits(maxDepth: 1_000, maxItems: .max)))
        } catch {
            throw .storeUnavailable("the stored session \(id) cannot be read: \(error.message)")
        }
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
