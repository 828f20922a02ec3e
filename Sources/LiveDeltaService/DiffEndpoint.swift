import ByteJSON
import LiveCollections
import MicroHTTP

/// Where a collection sits in a body, for pointers in errors: the array of a flat collection,
/// and the array of a sectioned one's sections. Pointers are made only when an error needs one.
struct CollectionLocation {
    /// The member that holds the collection (`old`, `new`); nil for a session body, whose
    /// `items` or `sections` are the collection.
    private let member: String?

    static func member(_ name: String) -> CollectionLocation { CollectionLocation(member: name) }

    static let sessionBody = CollectionLocation(member: nil)

    var items: JSONPointer { member.map { JSONPointer($0) } ?? JSONPointer("items") }
    var sections: JSONPointer { member.map { JSONPointer($0, "sections") } ?? JSONPointer("sections") }

    func pointer(_ position: DuplicateIdentifierError.Position, level: DuplicateIdentifierError.Level, itemsKey: String) -> JSONPointer {
        switch (position, level) {
        case (.index(let index), .item): items.appending(index)
        case (.index(let index), .section): sections.appending(index)
        case (.path(let path), _): sections.appending(path.section).appending(itemsKey).appending(path.item)
        }
    }
}

/// Diffs two collections read from JSON and writes the answer.
struct DiffComputation {
    let options: DiffOptions
    let oldLocation: CollectionLocation
    let newLocation: CollectionLocation
    var metrics: ServiceMetrics? = nil

    func respond(old: JSONCollection, new: JSONCollection) throws(APIError) -> [UInt8] {
        var writer = JSONWriter(capacity: 256 + 16 * max(old.itemCount, new.itemCount))
        switch (old.shape, new.shape) {
        case (.flat(let old), .flat(let new)):
            let result = try naming { () throws(DuplicateIdentifierError) in try options.policy.animatedDelta(from: old, to: new) }
            metrics?.diff(old: old, new: new, delta: result.delta)
            writer.raw("{")
            writer.flatMembers(
                animation: result.animation, delta: result.delta, spelling: options.spelling, old: ItemRows(old), new: ItemRows(new),
                deletedItems: options.includeDeletedItems ? result.deletedIndices.map { old[$0] } : nil)
            writer.raw("}")
        case (.sectioned(let old), .sectioned(let new)):
            let result = try naming { () throws(DuplicateIdentifierError) in try options.policy.animatedDelta(from: old, to: new) }
            metrics?.diff(old: old, new: new, sectionDelta: result.sectionDelta, itemDelta: result.itemDelta)
            writer.raw("{")
            try writer.sectionedMembers(
                sectionAnimation: result.sectionAnimation, itemAnimation: result.itemAnimation,
                sectionDelta: result.sectionDelta, itemDelta: result.itemDelta, spelling: options.spelling, old: old, new: new,
                deletedItems: options.includeDeletedItems ? result.deletedItemPaths.map { old[$0.section].items[$0.item] } : nil)
            writer.raw("}")
        default:
            throw .invalidShape(newLocation.items, "the old collection is \(old.kindName) but the new one is \(new.kindName); they must match")
        }
        return writer.bytes
    }

    /// Runs a diff, turning a duplicated id into its API error.
    func naming<T>(_ diff: () throws(DuplicateIdentifierError) -> T) throws(APIError) -> T {
        do {
            return try diff()
        } catch {
            throw duplicate(error)
        }
    }

    /// A duplicated id, named with both places and how to allow repeats: in a `/diff` body by
    /// its options, in a session (`inSession`, whose options are fixed when it is created) by
    /// creating it anew with them.
    func duplicate(_ error: DuplicateIdentifierError, inSession: Bool = false) -> APIError {
        let location = error.collection == .old ? oldLocation : newLocation
        let first = location.pointer(error.firstPosition, level: error.level, itemsKey: options.itemsKey)
        let second = location.pointer(error.secondPosition, level: error.level, itemsKey: options.itemsKey)
        let advice =
            error.level == .item
            ? (inSession
                ? "ids must be unique in this session; to match repeated ids by occurrence, create the session anew (PUT /sessions/{id}) "
                    + "with \"options\": {\"unique\": false}, as a session's options are fixed when it is created"
                : "ids must be unique in the whole collection; set \"unique\": false in options to match repeated ids by occurrence")
            : "section ids must be unique"
        var apiError = APIError(
            .duplicateID,
            message:
                "the \(error.level.rawValue) id \(error.id) appears twice in the \(error.collection.rawValue) collection, at \(first) and \(second); \(advice)",
            pointer: second.description)
        apiError.details = [("id", .string("\(error.id)")), ("pointers", .strings([first.description, second.description]))]
        return apiError
    }
}

/// `POST /diff`.
package enum DiffEndpoint {
    /// Reads and diffs in one pass over the body where it can (see `Envelope`).
    package static func respond(to body: ByteBuffer, limits: ReadLimits = ReadLimits(), metrics: ServiceMetrics? = nil) throws(APIError) -> [UInt8] {
        var envelope = try Envelope.read(
            body, members: ["old": .collection, "new": .collection, "options": .value], readingWith: DiffOptions(), limits: limits)
        let options = try envelope.options() ?? DiffOptions()
        // The member missing is named alone: a body with "old" only is told to add "new".
        let missing = ["old", "new"].filter { !envelope.has($0) }
        guard missing.isEmpty else {
            throw .invalidShape(
                JSONPointer(),
                missing.count == 2
                    ? "the body needs \"old\" and \"new\", the collections to diff"
                    : "the body needs \"\(missing[0])\", the \(missing[0] == "old" ? "collection before" : "collection after") the change")
        }
        var collections = try envelope.collections(readWith: options)
        // Both are read once the envelope has them; anything else is the server's own failure.
        guard let old = collections.take("old"), let new = collections.take("new") else {
            throw .internalError("the body's collections were not read")
        }
        let computation = DiffComputation(options: options, oldLocation: .member("old"), newLocation: .member("new"), metrics: metrics)
        // The envelope holds the request's share of the item budget until the answer is written.
        return try withExtendedLifetime(envelope) { () throws(APIError) in
            try computation.respond(old: old, new: new)
        }
    }
}

/// A body that is one collection (a flat array of items, or `{"sections": [...]}`), read
/// through the same path as requests: validation, ids and content hashes.
package enum CollectionDocument {
    package static func read(_ bytes: ByteBuffer, options: DiffOptions = DiffOptions(), limits: ReadLimits = ReadLimits()) throws(APIError)
        -> JSONCollection
    {
        var reader = CollectionReader(scanner: JSONScanner(bytes.bytes, maxDepth: limits.maxDepth), options: options, lease: ItemLease(limits))
        // One pass reads and checks; only a refusal reads the whole body again, so that text
        // that is not JSON is a 400 whatever else is wrong with it.
        let records: CollectionReader.Records
        do throws(APIError) {
            records = try reader.readCollection(at: 0, pointer: JSONPointer())
            reader.scanner.skipWhitespace()
            if reader.scanner.position < reader.scanner.count {
                throw APIError.malformedJSON(JSONError(.trailingContent, at: reader.scanner.position))
            }
        } catch {
            if error.status != 400 {
                do { try JSONScanner.validate(bytes.bytes, maxDepth: limits.maxDepth) } catch { throw .malformedJSON(error) }
            }
            throw error
        }
        let document = JSONDocument(body: bytes, arena: reader.arena, filter: options.filter, itemsKey: options.itemsKeyBytes)
        return reader.materialize(records, in: document, unique: options.unique)
    }
}
