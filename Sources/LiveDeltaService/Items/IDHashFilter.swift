/// A bitmap of a few items' id hashes (sixteen bits or more an item), which turns away most
/// other items by their stored hash alone: a scan of a long list for a few ids then reads one
/// number an item, and looks closer only at the few it lets through. An occurrence number does
/// not change the hash it reads.
struct IDHashFilter {
    private let bitmap: [UInt64]
    private let mask: Int

    init(_ items: [JSONItem]) {
        var bits = 64
        while bits < items.count * 16 { bits *= 2 }
        mask = bits - 1
        var bitmap = [UInt64](repeating: 0, count: bits / 64)
        for item in items {
            let bit = Int(item.storedID.hash) & mask
            bitmap[bit >> 6] |= 1 << UInt64(bit & 63)
        }
        self.bitmap = bitmap
    }

    /// False where `item`'s id is surely none of the filter's.
    @inline(__always)
    func mayHold(_ item: JSONItem) -> Bool {
        let bit = Int(item.storedID.hash) & mask
        return bitmap[bit >> 6] & (1 << UInt64(bit & 63)) != 0
    }
}
