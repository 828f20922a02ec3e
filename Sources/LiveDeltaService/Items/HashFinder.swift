import LiveCollections

/// Finds which of a few items each of many has the id of, by the ids' stored hashes (an open
/// addressing table), confirming a match by bytes. Most items are turned away by their id's
/// hash alone (`IDHashFilter`). Keys with one id are kept once, the first: a change may name
/// an id in every operation (a sectioned one names its section each time), and equal keys would
/// lie in one run of slots that each of them walks.
struct HashFinder {
    private let keys: [JSONItem]
    private let slots: [Int32]
    private let mask: Int
    private let filter: IDHashFilter

    init(_ keys: [JSONItem]) {
        self.keys = keys
        var size = 4
        while size < keys.count * 2 { size *= 2 }
        mask = size - 1
        var slots = [Int32](repeating: -1, count: size)
        keys.withUnsafeBufferPointer { keys in
            slots.withUnsafeMutableBufferPointer { slots in
                for index in keys.indices {
                    let slot = appendedSlot(of: keys[index], among: keys, in: slots, mask: size - 1)
                    if slots[slot] < 0 { slots[slot] = Int32(index) }
                }
            }
        }
        self.slots = slots
        filter = IDHashFilter(keys)
    }

    @inline(__always)
    func find(_ item: JSONItem) -> Int? {
        guard filter.mayHold(item) else { return nil }
        let hash = item.identityHash
        var slot = hash & mask
        while true {
            let index = slots[slot]
            if index < 0 { return nil }
            if keys[Int(index)].identityHash == hash, keys[Int(index)].hasSameID(as: item) { return Int(index) }
            slot = (slot + 1) & mask
        }
    }
}
