import ByteJSON
import MicroHTTP

/// A request body's top-level object, walked in one pass: collections are read as they are
/// reached, with the options known by then; small members (options, versions) are kept as
/// trees. The walk checks the whole body, so text that is not JSON is a 400 whatever else is
/// wrong. Where the options in force turn out to read items differently, or a collection could
/// not be read with the ones known then, `collections(readWith:)` reads them again.
struct Envelope {
    /// How a member is read.
    enum Member {
        /// A flat array of items or `{"sections": [...]}` (`/diff`'s old and new).
        case collection
        /// An array of items (a session's `items`).
        case items
        /// An array of sections (a session's `sections`).
        case sections
        /// A small value, kept as a tree.
        case value
    }

    let body: ByteBuffer
    let limits: ReadLimits
    private let lease: ItemLease
    private let members: KeyValuePairs<String, Member>
    /// The members the body has, in order; one small list searched in order, made once (a
    /// body has a handful of members, and a dictionary's allocations and hashing would cost
    /// more than the search).
    private var entries: [Entry] = []
    private var reader: CollectionReader
    /// Where reading with the options known at the time failed.
    private var deferred: APIError?

    /// Walks `body`, reading the collections among `members` with `options`.
    static func read(_ body: ByteBuffer, members: KeyValuePairs<String, Member>, readingWith options: DiffOptions, limits: ReadLimits)
        throws(APIError) -> Envelope
    {
        // Made, then walked in place: a throwing initializer that walked would copy the whole
        // envelope (its reader, options and lists) on the way out, a retain and a release for
        // each reference it holds.
        var envelope = Envelope(body, members: members, readingWith: options, limits: limits)
        try envelope.walk()
        return envelope
    }

    private init(_ body: ByteBuffer, members: KeyValuePairs<String, Member>, readingWith options: DiffOptions, limits: ReadLimits) {
        self.body = body
        self.limits = limits
        self.members = members
        lease = ItemLease(limits)
        reader = CollectionReader(scanner: JSONScanner(body.bytes, maxDepth: limits.maxDepth), options: options, lease: lease)
    }

    private mutating func walk() throws(APIError) {
        var walker = JSONScanner(body.bytes, maxDepth: limits.maxDepth)
        walker.hashing = false
        entries.reserveCapacity(members.count)
        var unknown: String?
        guard walker.peek() == UInt8(ascii: "{") else {
            _ = try json { () throws(JSONError) in try walker.scanDocument() }
            throw .invalidShape(JSONPointer(), "the body must be a JSON object with \(allowed)")
        }
        var key = try json { () throws(JSONError) in try walker.beginObject() }
        while let current = key {
            walker.skipWhitespace()
            let start = walker.position
            let name = walker.text(current)
            let kind = members.first { $0.key == name }?.value
            if let kind {
                if has(name) { throw .duplicateMember(JSONPointer(name)) }
                entries.append(Entry(name: name, kind: kind, position: start))
            }
            switch kind {
            case .value:
                if let repeated = try json({ () throws(JSONError) in try Self.repeatedMember(walker) }) {
                    throw .duplicateMember(JSONPointer(name, repeated))
                }
                var tree = walker
                entries[entries.count - 1].value = try json { () throws(JSONError) in try tree.buildValue(keeping: nil) }
                walker.position = tree.position
            case .some(let kind):
                do throws(APIError) {
                    entries[entries.count - 1].records = try read(name, kind, at: start)
                    walker.position = reader.scanner.position
                } catch {
                    if error.status == 400 { throw error }
                    // Perhaps only options still to come make it readable.
                    if deferred == nil { deferred = error }
                    walker.position = start
                    _ = try json { () throws(JSONError) in try walker.scanValue() }
                }
            case nil:
                if unknown == nil { unknown = name }
                _ = try json { () throws(JSONError) in try walker.scanValue() }
            }
            key = try json { () throws(JSONError) in try walker.nextKey() }
        }
        walker.skipWhitespace()
        if walker.position < walker.count { throw .malformedJSON(JSONError(.trailingContent, at: walker.position)) }
        if let unknown {
            throw .invalidShape(JSONPointer(unknown), "unknown member \"\(unknown)\"; the body takes \(allowed)")
        }
    }

    /// One member the body has, and what was read of it.
    private struct Entry {
        let name: String
        let kind: Member
        let position: Int
        var value: JSONValue?
        var records: CollectionReader.Records?
    }

    /// The members the body takes, for errors.
    private var allowed: String { members.map { "\"\($0.key)\"" }.joined(separator: ", ") }

    func has(_ name: String) -> Bool { entries.contains { $0.name == name } }

    func value(_ name: String) -> JSONValue? { entries.first { $0.name == name }?.value }

    /// The options member, parsed; nil where the body has none.
    func options() throws(APIError) -> DiffOptions? {
        guard let value = value("options") else { return nil }
        return try DiffOptions(value, at: JSONPointer("options"))
    }

    /// The collections of the body, read with `options` (again only where needed).
    mutating func collections(readWith options: DiffOptions) throws(APIError) -> ReadCollections {
        if deferred != nil || !options.readsLike(reader.options) {
            reader = CollectionReader(scanner: JSONScanner(body.bytes, maxDepth: limits.maxDepth), options: options, lease: lease)
            for index in entries.indices where entries[index].kind != .value {
                entries[index].records = try read(entries[index].name, entries[index].kind, at: entries[index].position)
            }
            deferred = nil
        }
        let document = JSONDocument(body: body, arena: reader.arena, filter: options.filter, itemsKey: options.itemsKeyBytes)
        var collections = ReadCollections()
        // One allocation for the list, rather than one for the first and another for the second.
        collections.list.reserveCapacity(entries.count)
        for entry in entries {
            if let records = entry.records {
                collections.list.append((entry.name, reader.materialize(records, in: document, unique: options.unique)))
            }
        }
        return collections
    }

    /// The first name that appears twice among the members of the object at the cursor; nil
    /// where there is none, or the value is not an object.
    private static func repeatedMember(_ scanner: JSONScanner) throws(JSONError) -> String? {
        var scanner = scanner
        guard scanner.peek() == UInt8(ascii: "{") else { return nil }
        scanner.hashing = false
        var seen = Set<[UInt8]>()
        var key = try scanner.beginObject()
        while let current = key {
            let name = scanner.decoded(current)
            if !seen.insert(name).inserted { return String(decoding: name, as: UTF8.self) }
            _ = try scanner.scanValue()
            key = try scanner.nextKey()
        }
        return nil
    }

    private mutating func read(_ name: String, _ kind: Member, at position: Int) throws(APIError) -> CollectionReader.Records {
        // Members sit one level down, inside the body's object.
        reader.scanner.openDepth = 1
        switch kind {
        case .items:
            reader.scanner.position = position
            guard reader.scanner.peek() == UInt8(ascii: "[") else {
                throw .invalidShape(JSONPointer(name), "\"\(name)\" must be an array of items")
            }
            return try reader.readCollection(at: position, pointer: JSONPointer(name))
        case .sections: return try reader.readSections(at: position, pointer: JSONPointer(name))
        default: return try reader.readCollection(at: position, pointer: JSONPointer(name))
        }
    }
}

/// The collections a body held, by member name: one or two, found by a look down the list
/// (no hashing of names, as a dictionary would take).
struct ReadCollections {
    fileprivate var list: [(name: String, collection: JSONCollection)] = []

    /// The collection a member held, moved out (no copy of its items or documents to count).
    mutating func take(_ name: String) -> JSONCollection? {
        guard let index = list.firstIndex(where: { $0.name == name }) else { return nil }
        return list.remove(at: index).collection
    }
}
