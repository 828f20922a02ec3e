/// An item a list of edits named, by where it stood before and after them: the edits left every
/// other item where it was relative to the others, with the same content.
package struct TouchedItem: Sendable, Hashable {
    /// Its index before the edits; nil where it is new.
    package var old: Int?
    /// Its index after them; nil where it is gone.
    package var new: Int?
    /// Its content differs (only read where it is on both sides).
    package var changed: Bool

    package init(old: Int?, new: Int?, changed: Bool) {
        self.old = old
        self.new = new
        self.changed = changed
    }
}

extension Delta where Position == Int {
    /// The exact, minimal delta of an edit that touched only `touched` (each identity once),
    /// worked out from them alone: the untouched items keep their order, so the fewest moves
    /// follow from which touched items stay in place and which untouched items they push out.
    /// Equal to `Delta(from:to:)` over the whole lists in deletions, insertions and reloads, and
    /// in the number of moves. Nil where more than `limit` touched items are on both sides (the
    /// caller then diffs the lists; the work here grows with the square of that number).
    ///
    /// How: the untouched items form one chain, increasing on both sides. Keeping a touched
    /// item in place means dropping the chain items between where it stood and where it stands
    /// (counted along the chain); choosing which touched items stay is a longest-path problem
    /// over them, where two chosen items' dropped stretches may overlap and count once.
    package init?(oldCount: Int, newCount: Int, touched: [TouchedItem], limit: Int = 2_048) {
        var deletions: [Int] = []
        var insertions: [Int] = []
        var reloads: [IndexPair] = []
        var kept: [IndexPair] = []
        var touchedOld: [Int] = []
        var touchedNew: [Int] = []
        for item in touched {
            if let old = item.old { touchedOld.append(old) }
            if let new = item.new { touchedNew.append(new) }
            switch (item.old, item.new) {
            case (let old?, nil): deletions.append(old)
            case (nil, let new?): insertions.append(new)
            case (let old?, let new?):
                kept.append(IndexPair(source: old, target: new))
                if item.changed { reloads.append(IndexPair(source: old, target: new)) }
            case (nil, nil): break
            }
        }
        guard kept.count <= limit else { return nil }
        touchedOld.sort()
        touchedNew.sort()
        kept.sort { $0.target < $1.target }
        // The untouched items are the same on both sides; a caller that says otherwise gets
        // no delta (and diffs), never a wrong one.
        guard oldCount - touchedOld.count == newCount - touchedNew.count else { return nil }

        // For each kept touched item, the stretch of the chain its staying drops: between the
        // chain items before its old place and those before its new place.
        let stretches = kept.map { pair -> (low: Int, high: Int) in
            let before = Self.untouched(before: pair.source, among: touchedOld)
            let after = Self.untouched(before: pair.target, among: touchedNew)
            return (min(before, after), max(before, after))
        }
        // best[j]: the most (kept items staying − chain items dropped) over choices ending in j.
        var best = [Int](repeating: 0, count: kept.count)
        var previous = [Int](repeating: -1, count: kept.count)
        for j in kept.indices {
            let (low, high) = stretches[j]
            var gain = 0
            for i in 0..<j where kept[i].source < kept[j].source {
                // Stretches of items chosen in order start and end in order, so the one chosen
                // just before is the only one this one can overlap beyond what it already did.
                let overlap = max(0, min(stretches[i].high, high) - max(stretches[i].low, low))
                if best[i] + overlap > gain {
                    gain = best[i] + overlap
                    previous[j] = i
                }
            }
            best[j] = 1 - (high - low) + gain
        }
        var staying = [Bool](repeating: false, count: kept.count)
        var dropped: [(low: Int, high: Int)] = []
        if let last = best.indices.max(by: { best[$0] < best[$1] }), best[last] > 0 {
            var j = last
            while j >= 0 {
                staying[j] = true
                dropped.append(stretches[j])
                j = previous[j]
            }
        }
        var moves = kept.indices.filter { !staying[$0] }.map { kept[$0] }
        // The dropped chain items, each once, from the start of the chain.
        var oldCursor = ChainCursor(touched: touchedOld)
        var newCursor = ChainCursor(touched: touchedNew)
        var next = 0
        for stretch in dropped.reversed() {
            for chainIndex in max(next, stretch.low)..<max(next, stretch.high) {
                moves.append(IndexPair(source: oldCursor.index(of: chainIndex), target: newCursor.index(of: chainIndex)))
            }
            next = max(next, stretch.high)
        }
        deletions.sort()
        insertions.sort()
        moves.sort { $0.source < $1.source }
        reloads.sort { $0.source < $1.source }
        self.init(deletions: deletions, insertions: insertions, moves: moves, reloads: reloads)
    }

    /// How many untouched items stand before `index` on a side whose touched items stand at
    /// `touched` (sorted).
    private static func untouched(before index: Int, among touched: [Int]) -> Int {
        var low = 0
        var high = touched.count
        while low < high {
            let mid = (low + high) / 2
            if touched[mid] < index { low = mid + 1 } else { high = mid }
        }
        return index - low
    }
}

/// Walks the untouched items of one side in order: the index of the n-th, for growing n.
private struct ChainCursor {
    let touched: [Int]
    private var skipped = 0

    init(touched: [Int]) { self.touched = touched }

    /// The index of the chain's `chainIndex`-th item (called with growing values).
    mutating func index(of chainIndex: Int) -> Int {
        while skipped < touched.count, touched[skipped] <= chainIndex + skipped { skipped += 1 }
        return chainIndex + skipped
    }
}
