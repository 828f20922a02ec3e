/// Which old item each new item is, by id: the first step of every diff.
///
/// Indices are `Int32` to halve the memory the matcher touches; a collection is limited to
/// `Int32.max` items.
@usableFromInline
struct IdentityMatch: Sendable {
    /// For each old index, its new index, or -1 where the item was deleted.
    @usableFromInline var oldToNew: [Int32]
    /// For each new index, its old index, or -1 where the item was inserted.
    @usableFromInline var newToOld: [Int32]

    @inlinable
    init(oldToNew: [Int32], newToOld: [Int32]) {
        self.oldToNew = oldToNew
        self.newToOld = newToOld
    }
}

/// The same id twice on one side, by index.
@usableFromInline
struct DuplicateIndices: Error {
    @usableFromInline var collection: DuplicateIdentifierError.Collection
    @usableFromInline var first: Int
    @usableFromInline var second: Int

    @inlinable
    init(collection: DuplicateIdentifierError.Collection, first: Int, second: Int) {
        self.collection = collection
        self.first = first
        self.second = second
    }
}

/// One slot of the open-addressing table: an id's full hash and where it stands on each side.
@usableFromInline @frozen
struct IdentitySlot {
    @usableFromInline var hash: Int
    @usableFromInline var old: Int32
    @usableFromInline var new: Int32

    @inlinable
    init(hash: Int, old: Int32, new: Int32) {
        self.hash = hash
        self.old = old
        self.new = new
    }

    @inlinable var isEmpty: Bool { old < 0 && new < 0 }
}

/// A power of two at least twice `entries`, so linear probing stays short even when every
/// id is distinct.
@usableFromInline
func identityTableCapacity(forEntries entries: Int) -> Int {
    var capacity = 16
    while capacity < entries * 2 { capacity <<= 1 }
    return capacity
}

/// Matches ids of two collections, hashing each id once.
///
/// The table is far larger than the caches for big collections, so its first probe is a
/// cache miss. Hashing everything first keeps the probe loops free of calls, which lets the
/// processor overlap many of those misses instead of waiting for each in turn.
///
/// Throws where one side holds an id twice (the two indices on that side).
@inlinable
func matchIdentities<Item: UniquelyIdentifiable>(
    _ old: UnsafeBufferPointer<Item>, _ new: UnsafeBufferPointer<Item>
) throws(DuplicateIndices) -> IdentityMatch {
    let (oldCount, newCount) = (old.count, new.count)
    var oldToNew = [Int32](repeating: -1, count: oldCount)
    var newToOld = [Int32](repeating: -1, count: newCount)
    // The hashes and the table are working memory: temporary allocations (on the stack where
    // small) cost no reference counting and no array set-up.
    let duplicate = withUnsafeTemporaryAllocation(of: Int.self, capacity: oldCount + newCount) { hashes in
        withUnsafeTemporaryAllocation(
            of: IdentitySlot.self, capacity: identityTableCapacity(forEntries: oldCount + newCount)
        ) { slots -> DuplicateIndices? in
            // String and UUID ids are hashed here where all of them allow it (`KeyedIdentityHash`).
            if !KeyedIdentityHash.fill(old, new, into: hashes) {
                for i in 0..<oldCount { hashes[i] = old[i].identityHash }
                for j in 0..<newCount { hashes[oldCount + j] = new[j].identityHash }
            }
            slots.initialize(repeating: IdentitySlot(hash: 0, old: -1, new: -1))
            if let duplicate = placeOldIdentities(old, hashes: UnsafeBufferPointer(rebasing: hashes[..<oldCount]), in: slots) {
                return duplicate
            }
            return oldToNew.withUnsafeMutableBufferPointer { oldToNew in
                newToOld.withUnsafeMutableBufferPointer { newToOld in
                    matchNewIdentities(
                        new, to: old, hashes: UnsafeBufferPointer(rebasing: hashes[oldCount...]), in: slots,
                        oldToNew: oldToNew, newToOld: newToOld)
                }
            }
        }
    }
    if let duplicate { throw duplicate }
    return IdentityMatch(oldToNew: oldToNew, newToOld: newToOld)
}

/// Puts every old id in the table (a power-of-two count of slots, linear probing); the first
/// id that is there already, where one is.
@inlinable
func placeOldIdentities<Item: UniquelyIdentifiable>(
    _ old: UnsafeBufferPointer<Item>, hashes: UnsafeBufferPointer<Int>, in slots: UnsafeMutableBufferPointer<IdentitySlot>
) -> DuplicateIndices? {
    let mask = slots.count - 1
    for i in 0..<old.count {
        let hash = hashes[i]
        var p = hash & mask
        while true {
            let slot = slots[p]
            if slot.isEmpty {
                slots[p] = IdentitySlot(hash: hash, old: Int32(truncatingIfNeeded: i), new: -1)
                break
            }
            if slot.hash == hash && old[Int(slot.old)].hasSameID(as: old[i]) {
                return DuplicateIndices(collection: .old, first: Int(slot.old), second: i)
            }
            p = (p &+ 1) & mask
        }
    }
    return nil
}

/// Looks every new id up in the table the old ids are in, pairing it with its old index where
/// there is one (and adding it where not, so that a repeat is caught); the first id that
/// comes twice among the new, where one does.
@inlinable
func matchNewIdentities<Item: UniquelyIdentifiable>(
    _ new: UnsafeBufferPointer<Item>, to old: UnsafeBufferPointer<Item>, hashes: UnsafeBufferPointer<Int>,
    in slots: UnsafeMutableBufferPointer<IdentitySlot>, oldToNew: UnsafeMutableBufferPointer<Int32>, newToOld: UnsafeMutableBufferPointer<Int32>
) -> DuplicateIndices? {
    let mask = slots.count - 1
    for j in 0..<new.count {
        let hash = hashes[j]
        var p = hash & mask
        while true {
            let slot = slots[p]
            if slot.isEmpty {
                slots[p] = IdentitySlot(hash: hash, old: -1, new: Int32(truncatingIfNeeded: j))
                break
            }
            if slot.hash == hash && (slot.old >= 0 ? old[Int(slot.old)].hasSameID(as: new[j]) : new[Int(slot.new)].hasSameID(as: new[j])) {
                if slot.new >= 0 { return DuplicateIndices(collection: .new, first: Int(slot.new), second: j) }
                slots[p].new = Int32(truncatingIfNeeded: j)
                oldToNew[Int(slot.old)] = Int32(truncatingIfNeeded: j)
                newToOld[j] = slot.old
                break
            }
            p = (p &+ 1) & mask
        }
    }
    return nil
}
