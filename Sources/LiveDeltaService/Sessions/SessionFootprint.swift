/// The memory a session's items take, as the stores count it against `--max-session-bytes`: the
/// bodies the items came in (as sent, whitespace and all, with ids' canonical bytes), a record
/// for each item, and each body's own bookkeeping. Counts alone cannot bound memory: one item
/// may come in a body of any size, and an item of two bytes still takes a record.
package enum SessionFootprint {
    /// An item's record (`JSONItem`).
    package static let bytesPerItem = MemoryLayout<JSONItem>.stride
    /// A body's document, its buffer objects, the allocator's headers and the slack of the
    /// arrays that grow with appends: 20,000 appends of one-item bodies to one session grew the
    /// server's resident memory by 396 bytes each, 16 of them the body and 40 the item.
    package static let bytesPerBody = 384

    /// The bytes `items` items take that point into the documents of `owners`.
    static func of(_ owners: DocumentOwners, items: Int) -> Int {
        owners.byteCount + owners.count * bytesPerBody + items * bytesPerItem
    }

    /// The bytes a collection's items take.
    static func of(_ collection: JSONCollection) -> Int {
        of(collection.owners, items: collection.itemCount)
    }
}
