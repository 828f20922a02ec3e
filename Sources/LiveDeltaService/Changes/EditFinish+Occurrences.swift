import LiveCollections

extension EditFinish {
    /// The delta of an edit where ids repeat. An item's identity is its id and its occurrence,
    /// so an insert, move or remove renumbers the items with its id (`affected`): those are found
    /// in one pass over each list's id hashes, numbered again in `list`'s order, and paired with
    /// the held ones by occurrence, as a diff matches them. Items only `updated` keep their
    /// occurrence. Every other item keeps its identity, content and order, so the delta follows
    /// from these (`Delta(oldCount:…)`); nil where they are too many, and the caller diffs.
    static func occurrenceDelta(
        held: [JSONItem], list: inout [JSONItem], affected: [JSONItem], updated: [(old: Int, new: Int)]
    ) -> IndexDelta? {
        let ids = Set(affected.map(\.plainID))
        var touched: [TouchedItem] = []
        for (old, new) in updated where !ids.contains(list[new].plainID) {
            touched.append(TouchedItem(old: old, new: new, changed: held[old] != list[new]))
        }
        if !ids.isEmpty {
            let filter = IDHashFilter(affected)
            /// The positions of each affected id's items, in order.
            func places(in items: [JSONItem]) -> [JSONItemID: [Int]] {
                var places: [JSONItemID: [Int]] = [:]
                for index in items.indices where filter.mayHold(items[index]) {
                    let id = items[index].plainID
                    if ids.contains(id) { places[id, default: []].append(index) }
                }
                return places
            }
            let before = places(in: held)
            let after = places(in: list)
            for id in ids {
                let (old, new) = (before[id] ?? [], after[id] ?? [])
                for (number, index) in new.enumerated() { list[index].occurrence = UInt32(number + 1) }
                for number in 0..<max(old.count, new.count) {
                    let (source, target) = (number < old.count ? old[number] : nil, number < new.count ? new[number] : nil)
                    let changed = source.flatMap { source in target.map { held[source] != list[$0] } } ?? false
                    touched.append(TouchedItem(old: source, new: target, changed: changed))
                }
            }
        }
        return IndexDelta(oldCount: held.count, newCount: list.count, touched: touched)
    }
}
