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
        var data = JSONWriter(capacity: byteCount(collection))
        for piece in pieces(collection) { data.raw(piece.assumingMemoryBound(to: UInt8.self)) }
        return data.bytes
    }

    /// The same text in pieces where they lie (the items' text in the request's body). Valid
    /// while the collection's document is.
    private static func pieces(_ collection: JSONCollection) -> [UnsafeRawBufferPointer] {
        let (texts, open, close) =
            switch collection.shape {
            case .flat(let items): (items.map(\.text), Self.openFlat, Self.closeFlat)
            case .sectioned(let sections): (sections.map(\.text), Self.openSectioned, Self.closeSectioned)
            }
        var pieces = [open]
        pieces.reserveCapacity(texts.count * 2 + 1)
        for (index, text) in texts.enumerated() {
            if index > 0 { pieces.append(Self.comma) }
            pieces.append(UnsafeRawBufferPointer(text))
        }
        pieces.append(close)
        return pieces
    }

    private static func byteCount(_ collection: JSONCollection) -> Int {
        switch collection.shape {
        case .flat(let items): items.reduce(2) { $0 + $1.text.count + 1 }
        case .sectioned(let sections): sections.reduce(14) { $0 + $1.text.count + 1 }
        }
    }

    private static var openFlat: UnsafeRawBufferPointer { text("[") }
    private static var closeFlat: UnsafeRawBufferPointer { text("]") }
    private static var openSectioned: UnsafeRawBufferPointer { text("{\"sections\":[") }
    private static var closeSectioned: UnsafeRawBufferPointer { text("]}") }
    private static var comma: UnsafeRawBufferPointer { text(",") }

    private static func text(_ text: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
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
        let session = HeldSession(id: id, incarnation: stored.incarnation, options: parsed, holder: holder, owners: collection.owners, now: 0)
        // Parts that do not match what was read are forgotten: the next commit writes anew.
        session.storedParts = stored.parts.flatMap { PartPlanner.counted($0, in: collection) }
        return session
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
