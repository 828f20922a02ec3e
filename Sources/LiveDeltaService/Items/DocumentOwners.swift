/// The documents a collection's items point into. Items do not keep their document alive (a
/// reference count on every copy of an item was a large part of a diff's time): whatever holds items
/// holds these with them — a collection, a session, a change, a nested list's delta.
package struct DocumentOwners: Sendable {
    /// The first document held inline: most holders have one, and a one-element array would
    /// cost an allocation per collection.
    private var first: JSONDocument?
    private var more: [JSONDocument] = []

    init() {}

    init(_ document: JSONDocument) { first = document }

    /// Both sets, each document once.
    func merging(_ other: DocumentOwners) -> DocumentOwners {
        var merged = self
        guard other.count > 1 else {
            if let document = other.first { merged.add(document) }
            return merged
        }
        // Sessions that keep their items where they came gather many documents: a set keeps
        // merging two such linear, where looking each up in the other would not be.
        var known = Set(documents.map(ObjectIdentifier.init))
        for document in other.documents where known.insert(ObjectIdentifier(document)).inserted {
            if merged.first == nil { merged.first = document } else { merged.more.append(document) }
        }
        return merged
    }

    /// These and all of `others`, each document once, in one pass.
    func merging(_ others: [DocumentOwners]) -> DocumentOwners {
        guard !others.isEmpty else { return self }
        var merged = self
        var known = Set(documents.map(ObjectIdentifier.init))
        for other in others {
            for document in other.documents where known.insert(ObjectIdentifier(document)).inserted {
                if merged.first == nil { merged.first = document } else { merged.more.append(document) }
            }
        }
        return merged
    }

    private var documents: [JSONDocument] { (first.map { [$0] } ?? []) + more }

    /// The bytes the documents hold: each one's body (as it came, whitespace and all) and arena.
    var byteCount: Int {
        more.reduce(first?.byteCount ?? 0) { $0 + $1.byteCount }
    }

    /// How many documents.
    var count: Int { (first == nil ? 0 : 1) + more.count }

    private mutating func add(_ document: JSONDocument) {
        guard first !== document, !more.contains(where: { $0 === document }) else { return }
        if first == nil { first = document } else { more.append(document) }
    }
}
