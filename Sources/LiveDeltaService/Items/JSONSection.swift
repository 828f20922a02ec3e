import LiveCollections

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

    /// Its id's hash as every process computes it (`StoredID.stableHash`).
    var stableIDHash: UInt32 { storedID.stableHash(in: reference) }

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
