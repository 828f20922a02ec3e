import ByteJSON
import LiveCollections

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An item's identity: its id value by meaning (1 and 1.0 are one id, 1 and "1" two), and in
/// non-unique mode its occurrence number. Unlike an item, an id keeps its document alive: ids
/// go into errors, which may outlive the request's collections.
package struct JSONItemID: Hashable, Sendable, CustomStringConvertible {
    let document: JSONDocument
    let stored: StoredID
    let occurrence: UInt32

    package func hash(into hasher: inout Hasher) { hasher.combine(stored.key(occurrence)) }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.occurrence == rhs.occurrence && lhs.stored.same(in: DocumentRef(lhs.document), as: rhs.stored, in: DocumentRef(rhs.document))
    }

    /// The id as JSON text.
    package var description: String {
        if stored.storage == .inline { return "\(stored.bytes.inlineValue)" }
        let text = document.slice(stored.bytes, in: stored.storage)
        switch stored.kind {
        case .number:
            return JSONScanner.number(fromIdentity: text).description
        case .string:
            var writer = JSONWriter()
            writer.string(generalizedUTF8: text)
            return String(decoding: writer.bytes, as: UTF8.self)
        default:
            return String(decoding: text, as: UTF8.self)
        }
    }
}

/// An id as kept: the hash of its value and where its canonical bytes are (16 bytes).
struct StoredID: Sendable {
    var hash: UInt32
    var bytes: ByteRange
    var kind: JSONKind
    var storage: IDStorage

    /// The id with an occurrence number (0 where ids are unique), mixed into its hash.
    func id(in document: JSONDocument, occurrence: UInt32) -> JSONItemID {
        JSONItemID(document: document, stored: self, occurrence: occurrence)
    }

    func key(_ occurrence: UInt32) -> UInt64 {
        occurrence == 0 ? UInt64(hash) : ValueHash.mix(UInt64(hash), UInt64(occurrence))
    }

    /// Whether this id, in `document`, is `other` in `otherDocument`.
    @inline(__always)
    func same(in document: DocumentRef, as other: StoredID, in otherDocument: DocumentRef) -> Bool {
        guard hash == other.hash, kind == other.kind, storage == other.storage, bytes.length == other.bytes.length else { return false }
        if storage == .inline { return bytes.start == other.bytes.start }
        return sameBytes(document.slice(bytes, in: storage), otherDocument.slice(other.bytes, in: other.storage))
    }
}

/// An item of a request: where its text is, its id and the hash of its content (40 bytes). It
/// points into its document without keeping it alive; see `DocumentOwners`.
///
/// Content equality is JSON value equality over the fields the filter keeps: equal hashes are
/// confirmed by comparing bytes, and where the bytes differ, by comparing the values.
package struct JSONItem: UniquelyIdentifiable, Sendable {
    let reference: DocumentRef
    let contentHash: UInt32
    let storedID: StoredID
    let raw: ByteRange
    /// 0 where ids are unique; else 1 for an id's first occurrence, 2 for its second…
    var occurrence: UInt32

    /// The document the item's text is in (kept alive by the item's holder, not the item).
    var document: JSONDocument { reference.document }

    /// The item's JSON text, as it was sent.
    package var text: UnsafeBufferPointer<UInt8> { reference.slice(raw, in: .body) }

    package var uniqueID: JSONItemID { storedID.id(in: document, occurrence: occurrence) }

    /// The id's hash with its occurrence: already well mixed, so matching need not hash again.
    package var identityHash: Int { Int(truncatingIfNeeded: storedID.key(occurrence)) }

    /// The id without its occurrence, for counting occurrences.
    var plainID: JSONItemID { storedID.id(in: document, occurrence: 0) }

    /// The same id, compared in place (building `uniqueID` would count a reference).
    package func hasSameID(as other: Self) -> Bool {
        occurrence == other.occurrence && storedID.same(in: reference, as: other.storedID, in: other.reference)
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.contentHash == rhs.contentHash else { return false }
        let (a, b) = (lhs.text, rhs.text)
        return sameBytes(a, b) || sameMeaning(a, b, counting: .fields(lhs.document.filter))
    }
}

/// A section of a request: its id, the hash of its own fields (all but its items) and items.
package struct JSONSection: UniquelyIdentifiableSection, Sendable {
    let reference: DocumentRef
    let headerHash: UInt32
    let storedID: StoredID
    let raw: ByteRange
    package internal(set) var items: [JSONItem]

    /// The document the section's text is in (kept alive by its holder, not the section).
    var document: JSONDocument { reference.document }

    package var uniqueID: JSONItemID { storedID.id(in: document, occurrence: 0) }

    package var identityHash: Int { Int(storedID.hash) }

    package func hasSameID(as other: Self) -> Bool { storedID.same(in: reference, as: other.storedID, in: other.reference) }

    package var text: UnsafeBufferPointer<UInt8> { reference.slice(raw, in: .body) }

    package func hasEqualSectionContent(to other: Self) -> Bool {
        guard headerHash == other.headerHash else { return false }
        return sameMeaning(text, other.text, counting: .allBut(document.itemsKey))
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.hasEqualSectionContent(to: rhs) && lhs.items == rhs.items
    }
}

extension Array where Element == JSONSection {
    /// Items in all the sections.
    var itemCount: Int { reduce(0) { $0 + $1.items.count } }
}

/// Which top-level members of an object count when two values are compared.
enum CountedMembers {
    /// An item's content: the fields its filter keeps.
    case fields(ContentFilter)
    /// A section's own content: all but its items.
    case allBut([UInt8])

    func includes(_ key: ScannedString, in scanner: JSONScanner) -> Bool {
        switch self {
        case .fields(let filter): filter.includes(key, in: scanner)
        case .allBut(let excluded): !scanner.string(key, equals: excluded)
        }
    }
}

/// Whether two byte strings are equal.
@inline(__always)
func sameBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
}

/// Whether two valid JSON texts mean the same, counting only the top-level members `counted`
/// names when they are objects: equal bytes do at once; otherwise (the slow path behind a
/// hash match) the values are compared as trees.
func sameMeaning(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, counting counted: CountedMembers) -> Bool {
    if sameBytes(a, b) { return true }
    func tree(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        // Both texts were read under the request's depth limit, which is at most 1,000.
        var scanner = JSONScanner(bytes, maxDepth: 1_000)
        let reader = scanner
        return try? scanner.buildValue(keeping: { counted.includes($0, in: reader) })
    }
    guard let first = tree(a), let second = tree(b) else { return false }
    return first == second
}

/// Numbers items by occurrence of their ids, counting on from `seen` (which it updates): the
/// k-th occurrence of an id in a collection is the same item as the k-th in another.
func numberOccurrences(_ items: inout [JSONItem], seen: inout [JSONItemID: UInt32]) {
    for index in items.indices {
        let id = items[index].plainID
        let occurrence = seen[id, default: 0] + 1
        seen[id] = occurrence
        items[index].occurrence = occurrence
    }
}
