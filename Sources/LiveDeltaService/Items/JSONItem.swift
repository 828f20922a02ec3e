import ByteJSON
import LiveCollections

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
        var writer = JSONWriter(capacity: 32)
        writer.identity(self)
        return String(decoding: writer.bytes, as: UTF8.self)
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

    /// A hash of the id's value that every process computes alike: FNV-1a over its kind and
    /// its canonical bytes (those `same` compares). `hash` is keyed afresh in each process
    /// (`ValueHash.processKey`), so storage that replicas share keeps this one.
    func stableHash(in document: DocumentRef) -> UInt32 {
        // Plain loops over a local: a nested function that captured the hash, handed to
        // `forEach`, had the runtime check exclusive access at every byte (`swift_beginAccess`):
        // with the same in `PartPlanner.idHashes`, a seventh of a 100,000-item update's CPU on Redis.
        var hash: UInt32 = 0x811C_9DC5
        @inline(__always) func fold(_ hash: UInt32, _ byte: UInt8) -> UInt32 { (hash ^ UInt32(byte)) &* 0x0100_0193 }
        if storage == .inline {
            hash = fold(hash, 0)
            // Its 8 bytes, least significant first (as stored little-endian).
            let value = UInt64(bitPattern: bytes.inlineValue)
            for shift in stride(from: 0, to: 64, by: 8) { hash = fold(hash, UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        } else {
            hash = fold(hash, kind.rawValue &+ 1)
            for byte in document.slice(bytes, in: storage) { hash = fold(hash, byte) }
        }
        return hash
    }

    /// Whether this id, in `document`, is `other` in `otherDocument`. By value: a string's
    /// canonical bytes are its unescaped text, kept in the body where it was sent without
    /// escapes and in the arena where it was not, so `"a"` and `"\u0061"` are one id with
    /// their bytes in different places. An integer is inline wherever it was spelled.
    @inline(__always)
    func same(in document: DocumentRef, as other: StoredID, in otherDocument: DocumentRef) -> Bool {
        guard hash == other.hash, kind == other.kind else { return false }
        if storage == .inline || other.storage == .inline {
            return storage == other.storage && bytes.inlineValue == other.bytes.inlineValue
        }
        guard bytes.length == other.bytes.length else { return false }
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

    /// Its id's hash as every process computes it (`StoredID.stableHash`).
    var stableIDHash: UInt32 { storedID.stableHash(in: reference) }

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
