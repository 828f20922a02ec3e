import ByteJSON
import LiveCollections

/// Reads collections out of a validated body in one pass each, recording where items are,
/// their ids and content hashes; `materialize` then turns the records into items.
struct CollectionReader {
    struct ItemRecord {
        var contentHash: UInt32
        var raw: ByteRange
        var id: StoredID
    }

    struct SectionRecord {
        var headerHash: UInt32
        var raw: ByteRange
        var id: StoredID
        var items: Range<Int>
    }

    enum Records {
        case flat(Range<Int>)
        case sectioned([SectionRecord])
    }

    var scanner: JSONScanner
    let options: DiffOptions
    /// The id's name, held here for the per-item scan; the rest of the keys are read from
    /// `options.names` (copying each here would cost a reference apiece per request).
    private let idKey: JSONName
    /// Whether the id key is a path (`movie.id`) rather than one name (the common case).
    private let idKeyIsPath: Bool
    private var names: ScanNames { options.names }
    private let filtersFields: Bool
    private(set) var arena: [UInt8] = []
    private(set) var items: [ItemRecord] = []
    /// The request's share of the items the server holds (a second reading of the same body
    /// shares it).
    private let lease: ItemLease

    init(scanner: JSONScanner, options: DiffOptions, lease: ItemLease) {
        self.scanner = scanner
        self.options = options
        self.lease = lease
        idKey = options.names.idName
        idKeyIsPath = options.names.idPath.count > 1
        filtersFields = options.filter != .allFields
        // Small bodies then grow their records once, not four or five times.
        items.reserveCapacity(16)
    }

    /// Reads the collection whose value starts at `position`.
    mutating func readCollection(at position: Int, pointer: JSONPointer) throws(APIError) -> Records {
        scanner.position = position
        switch scanner.peek() {
        case UInt8(ascii: "["):
            let first = items.count
            try readItems(pointer)
            return .flat(first..<items.count)
        case UInt8(ascii: "{"):
            var sections: [SectionRecord]?
            var key = try json { () throws(JSONError) in try scanner.beginObject() }
            while let current = key {
                guard scanner.string(current, is: Self.sectionsName) else {
                    let name = scanner.text(current)
                    throw .invalidShape(pointer.appending(name), "a sectioned collection holds only \"sections\", not \"\(name)\"")
                }
                sections = try readSections(pointer.appending("sections"))
                key = try json { () throws(JSONError) in try scanner.nextKey() }
            }
            guard let sections else {
                throw .invalidShape(pointer, "a sectioned collection needs \"sections\": an array of sections")
            }
            return .sectioned(sections)
        default:
            throw .invalidShape(pointer, "a collection is an array of items, or an object {\"sections\": [...]}")
        }
    }

    private static let sectionsName = JSONName("sections")

    /// Reads an array of sections whose value starts at `position` (a session body's "sections").
    mutating func readSections(at position: Int, pointer: JSONPointer) throws(APIError) -> Records {
        scanner.position = position
        return .sectioned(try readSections(pointer))
    }

    private mutating func readSections(_ pointer: JSONPointer) throws(APIError) -> [SectionRecord] {
        guard scanner.peek() == UInt8(ascii: "[") else {
            throw .invalidShape(pointer, "\"sections\" must be an array of section objects")
        }
        var sections = [SectionRecord]()
        var more = try json { () throws(JSONError) in try scanner.beginArray() }
        while more {
            sections.append(try readSection(pointer.appending(sections.count)))
            more = try json { () throws(JSONError) in try scanner.nextElement() }
        }
        return sections
    }

    private mutating func readSection(_ pointer: JSONPointer) throws(APIError) -> SectionRecord {
        guard scanner.peek() == UInt8(ascii: "{") else {
            throw .invalidShape(pointer, "a section must be an object with an id and \"\(options.itemsKey)\"")
        }
        let start = scanner.position
        var id: ScannedValue?
        var sectionItems: Range<Int>?
        var memberSum: UInt64 = 0
        var members = 0
        var key = try json { () throws(JSONError) in try scanner.beginObject() }
        while let current = key {
            if scanner.string(current, is: names.itemsName) {
                if sectionItems != nil { throw .duplicateMember(pointer.appending(options.itemsKey)) }
                guard scanner.peek() == UInt8(ascii: "[") else {
                    throw .invalidShape(pointer.appending(options.itemsKey), "\"\(options.itemsKey)\" must be an array of items")
                }
                let first = items.count
                try readItems(pointer.appending(options.itemsKey))
                sectionItems = first..<items.count
            } else {
                let value = try json { () throws(JSONError) in try scanner.scanValue() }
                if scanner.string(current, is: names.sectionIdName) {
                    if id != nil { throw .duplicateMember(pointer.appending(options.sectionIdKey.splitPath[0])) }
                    id = try lookup(names.sectionIdPath.dropFirst(), in: value)
                }
                memberSum &+= ValueHash.member(key: current.hash, value: value.hash)
                members += 1
            }
            key = try json { () throws(JSONError) in try scanner.nextKey() }
        }
        let raw = ByteRange(start..<scanner.position)
        guard let id else {
            throw APIError(.missingID, message: "the section at \(pointer) has no \"\(options.sectionIdKey)\"", pointer: pointer.description)
        }
        guard let items = sectionItems else {
            throw .invalidShape(pointer, "the section at \(pointer) has no \"\(options.itemsKey)\" array")
        }
        guard let identity = identity(of: id, scalarItem: false) else {
            throw invalidID(id, at: pointer.appending(path: options.sectionIdKey.splitPath))
        }
        return SectionRecord(headerHash: fold(ValueHash.object(memberSum: memberSum, count: members)), raw: raw, id: identity, items: items)
    }

    /// At an array of items: reads them all into `items`, each admitted before it is read.
    private mutating func readItems(_ pointer: JSONPointer) throws(APIError) {
        let first = items.count
        // The keys of the last item read, by place: the next item's keys are likely the same.
        var keyShapes = KeyShapes()
        var more = try json { () throws(JSONError) in try scanner.beginArray() }
        while more {
            try lease.admit(items.count)
            items.append(try readItem(pointer, items.count - first, keyShapes: &keyShapes))
            more = try json { () throws(JSONError) in try scanner.nextElement() }
        }
    }

    /// Inlined into `readItems`, which runs it once an item: no call is paid for each item.
    @inline(__always)
    private mutating func readItem(_ pointer: JSONPointer, _ index: Int, keyShapes: inout KeyShapes) throws(APIError) -> ItemRecord {
        guard let first = scanner.peek() else { throw .malformedJSON(JSONError(.unexpectedEnd, at: scanner.position)) }
        let start = scanner.position
        switch first {
        case UInt8(ascii: "{") where !filtersFields:
            // Every member counts: the scanner's own object hash is the content hash, and it
            // picks out the id on the way, in one pass over the item.
            let (value, idMember, repeated) = try json { () throws(JSONError) in try scanner.scanValue(findingMember: idKey, keyShapes: &keyShapes) }
            if repeated { throw .duplicateMember(pointer.appending(index).appending(options.idKey.splitPath[0])) }
            var id = idMember
            if let member = idMember, idKeyIsPath { id = try lookup(names.idPath.dropFirst(), in: member) }
            return try record(id: id, contentHash: value.hash, raw: start..<scanner.position, pointer, index)
        case UInt8(ascii: "{"):
            var id: ScannedValue?
            var sawID = false
            var memberSum: UInt64 = 0
            var members = 0
            var key = try json { () throws(JSONError) in try scanner.beginObject() }
            while let current = key {
                let value = try json { () throws(JSONError) in try scanner.scanValue() }
                if scanner.string(current, is: idKey) {
                    if sawID { throw .duplicateMember(pointer.appending(index).appending(options.idKey.splitPath[0])) }
                    sawID = true
                    id = idKeyIsPath ? try lookup(names.idPath.dropFirst(), in: value) : value
                }
                if !filtersFields || options.filter.includes(current, in: scanner) {
                    memberSum &+= ValueHash.member(key: current.hash, value: value.hash)
                    members += 1
                }
                key = try json { () throws(JSONError) in try scanner.nextKey() }
            }
            return try record(
                id: id, contentHash: ValueHash.object(memberSum: memberSum, count: members), raw: start..<scanner.position, pointer, index)
        case UInt8(ascii: "["):
            throw APIError(
                .invalidItem, pointer: pointer.appending(index),
                message: "an array has no identity; items are objects with an id, or strings, numbers, booleans or null")
        default:
            let value = try json { () throws(JSONError) in try scanner.scanValue() }
            guard let identity = identity(of: value, scalarItem: true) else { throw invalidID(value, at: pointer.appending(index)) }
            return ItemRecord(contentHash: fold(value.hash), raw: ByteRange(value.start..<value.end), id: identity)
        }
    }

    /// An object item's record, once its id (if any) and content hash are known.
    private mutating func record(id: ScannedValue?, contentHash: UInt64, raw: Range<Int>, _ pointer: JSONPointer, _ index: Int) throws(APIError)
        -> ItemRecord
    {
        guard let id else {
            let itemPointer = pointer.appending(index)
            throw APIError(
                .missingID, message: "the item at \(itemPointer) has no \"\(options.idKey)\"",
                pointer: itemPointer.description)
        }
        guard let identity = identity(of: id, scalarItem: false) else {
            throw invalidID(id, at: pointer.appending(index).appending(path: options.idKey.splitPath))
        }
        return ItemRecord(contentHash: fold(contentHash), raw: ByteRange(raw), id: identity)
    }

    /// Follows the rest of a dotted path into `value`; nil where it leads nowhere.
    private mutating func lookup(_ path: ArraySlice<[UInt8]>, in value: ScannedValue) throws(APIError) -> ScannedValue? {
        guard let next = path.first else { return value }
        guard value.kind == .object else { return nil }
        let resume = scanner.position
        defer { scanner.position = resume }
        scanner.position = value.start
        var found: ScannedValue?
        var key = try json { () throws(JSONError) in try scanner.beginObject() }
        while let current = key {
            let member = try json { () throws(JSONError) in try scanner.scanValue() }
            if scanner.string(current, equals: next) { found = member }
            key = try json { () throws(JSONError) in try scanner.nextKey() }
        }
        guard let found else { return nil }
        return try lookup(path.dropFirst(), in: found)
    }

    /// An id's canonical bytes: a string's unescaped text, a number's canonical value; nil for
    /// a kind that cannot be an id.
    private mutating func identity(of value: ScannedValue, scalarItem: Bool) -> StoredID? {
        let hash = fold(value.hash)
        switch value.kind {
        case .string:
            let text = ScannedString(hash: value.hash, start: value.start + 1, end: value.end - 1, hasEscapes: value.hasEscapes)
            if !value.hasEscapes {
                return StoredID(hash: hash, bytes: ByteRange(text.start..<text.end), kind: .string, storage: .body)
            }
            return StoredID(hash: hash, bytes: appendToArena(scanner.decoded(text)), kind: .string, storage: .arena)
        case .number:
            if let integer = scanner.exactInteger(value.start..<value.end) {
                return StoredID(hash: hash, bytes: ByteRange(inline: integer), kind: .number, storage: .inline)
            }
            let start = arena.count
            scanner.appendNumberIdentity(value.start..<value.end, to: &arena)
            return StoredID(hash: hash, bytes: ByteRange(start..<arena.count), kind: .number, storage: .arena)
        case .bool where scalarItem, .null where scalarItem:
            return StoredID(hash: hash, bytes: ByteRange(value.start..<value.end), kind: value.kind, storage: .body)
        default:
            return nil
        }
    }

    private func invalidID(_ value: ScannedValue, at pointer: JSONPointer) -> APIError {
        APIError(
            .invalidID, pointer: pointer,
            message: "the id at \(pointer) must be a string or a number, not \(value.kind.article)")
    }

    private mutating func appendToArena(_ bytes: [UInt8]) -> ByteRange {
        let start = arena.count
        arena.append(contentsOf: bytes)
        return ByteRange(start..<arena.count)
    }

    /// Turns records into items of `document`, numbering occurrences where ids need not be
    /// unique (which does not change how items are read, so it is decided here).
    func materialize(_ records: Records, in document: JSONDocument, unique: Bool) -> JSONCollection {
        let reference = DocumentRef(document)
        func item(_ record: ItemRecord) -> JSONItem {
            JSONItem(reference: reference, contentHash: record.contentHash, storedID: record.id, raw: record.raw, occurrence: 0)
        }
        var seen = [JSONItemID: UInt32]()
        switch records {
        case .flat(let range):
            var flat = items[range].map(item)
            if !unique { numberOccurrences(&flat, seen: &seen) }
            return .flat(flat, owners: DocumentOwners(document))
        case .sectioned(let sections):
            let sections = sections.map { section in
                var sectionItems = items[section.items].map(item)
                if !unique { numberOccurrences(&sectionItems, seen: &seen) }
                return JSONSection(reference: reference, headerHash: section.headerHash, storedID: section.id, raw: section.raw, items: sectionItems)
            }
            return .sectioned(sections, owners: DocumentOwners(document))
        }
    }
}

extension APIError {
    init(_ code: ErrorCode, pointer: JSONPointer, message: String) {
        self.init(code, message: message, pointer: pointer.description)
    }
}

extension JSONKind {
    var article: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension String {
    var splitPath: [String] { split(separator: ".", omittingEmptySubsequences: false).map(String.init) }
}
