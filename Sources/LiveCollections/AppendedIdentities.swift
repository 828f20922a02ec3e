/// Where appending `new` to `old`, whose ids are distinct, would hold an id twice: the two
/// indices in the combined collection, for the repeat that comes first (as matching the
/// combined collection would report it); nil where every id stays distinct.
///
/// Costs a table of the appended ids and one look-up per old id, where matching the combined
/// collection would put every id in a table (and allocate one the size of the collection).
@inlinable
func appendedDuplicate<Item: UniquelyIdentifiable>(_ old: [Item], _ new: [Item]) -> DuplicateIndices? {
    let base = old.count
    let mask = identityTableCapacity(forEntries: new.count) - 1
    return new.withUnsafeBufferPointer { new in
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: mask + 1) { slots in
            slots.initialize(repeating: -1)
            var repeated: DuplicateIndices?
            for index in 0..<new.count {
                let found = appendedSlot(of: new[index], among: new, in: slots, mask: mask)
                guard slots[found] < 0 else {
                    repeated = DuplicateIndices(collection: .old, first: base + Int(slots[found]), second: base + index)
                    break
                }
                slots[found] = Int32(index)
            }
            // An old id repeated by an appended one: the earliest appended one it repeats comes first.
            var earliest: DuplicateIndices?
            old.withUnsafeBufferPointer { old in
                for index in 0..<old.count {
                    let found = appendedSlot(of: old[index], among: new, in: slots, mask: mask)
                    guard slots[found] >= 0 else { continue }
                    let second = base + Int(slots[found])
                    if second < earliest?.second ?? .max { earliest = DuplicateIndices(collection: .old, first: index, second: second) }
                }
            }
            guard let earliest else { return repeated }
            guard let repeated else { return earliest }
            return earliest.second < repeated.second ? earliest : repeated
        }
    }
}

/// The slot holding `item`'s id among the appended items placed in `slots` so far, or the
/// empty slot where it would go (linear probing). The service's `HashFinder` builds its table
/// with it too.
@inlinable @inline(__always)
package func appendedSlot<Item: UniquelyIdentifiable>(
    of item: Item, among new: UnsafeBufferPointer<Item>, in slots: UnsafeMutableBufferPointer<Int32>, mask: Int
) -> Int {
    let hash = item.identityHash
    var slot = hash & mask
    while slots[slot] >= 0 {
        let placed = new[Int(slots[slot])]
        if placed.identityHash == hash, placed.hasSameID(as: item) { return slot }
        slot = (slot + 1) & mask
    }
    return slot
}
