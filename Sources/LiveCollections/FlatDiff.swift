/// Builds a flat delta from matched ids: deletions, insertions, the fewest moves, and
/// reloads where `contentChanged(old, new)` says a kept item's content differs.
@usableFromInline
func flatDelta(from match: IdentityMatch, contentChanged: (Int, Int) -> Bool) -> IndexDelta {
    var delta = IndexDelta()
    let kept = match.oldToNew.reduce(0) { $1 >= 0 ? $0 + 1 : $0 }
    // Exact sizes: each list is allocated once, or not at all where it stays empty.
    delta.deletions.reserveCapacity(match.oldToNew.count - kept)
    delta.insertions.reserveCapacity(match.newToOld.count - kept)
    // The kept items' old and new indices, and which of them stay, in one temporary
    // allocation (on the stack where small).
    withUnsafeTemporaryAllocation(of: Int32.self, capacity: 2 * kept) { scratch in
        let keptOld = UnsafeMutableBufferPointer(rebasing: scratch[0..<kept])
        let keptNew = UnsafeMutableBufferPointer(rebasing: scratch[kept..<2 * kept])
        var k = 0
        for (old, new) in match.oldToNew.enumerated() {
            if new < 0 {
                delta.deletions.append(old)
            } else {
                keptOld[k] = Int32(truncatingIfNeeded: old)
                keptNew[k] = new
                k += 1
                if contentChanged(old, Int(new)) {
                    delta.reloads.append(IndexPair(source: old, target: Int(new)))
                }
            }
        }
        for (new, old) in match.newToOld.enumerated() where old < 0 {
            delta.insertions.append(new)
        }
        withUnsafeTemporaryAllocation(of: Bool.self, capacity: kept) { stays in
            markLongestIncreasingSubsequence(UnsafeBufferPointer(keptNew), in: stays)
            for k in 0..<kept where !stays[k] {
                delta.moves.append(IndexPair(source: Int(keptOld[k]), target: Int(keptNew[k])))
            }
        }
    }
    return delta
}

/// Matches the items of two flat collections, naming a duplicated id by value and position.
@inlinable
func matchItems<Item: UniquelyIdentifiable>(
    _ old: [Item], _ new: [Item]
) throws(DuplicateIdentifierError) -> IdentityMatch {
    do {
        return try old.withUnsafeBufferPointer { old throws(DuplicateIndices) in
            try new.withUnsafeBufferPointer { new throws(DuplicateIndices) in
                try matchIdentities(old, new)
            }
        }
    } catch {
        let side = error.collection == .old ? old : new
        throw DuplicateIdentifierError(
            id: side[error.second].uniqueID, collection: error.collection, level: .item,
            firstPosition: .index(error.first), secondPosition: .index(error.second))
    }
}

extension Delta where Position == Int {
    /// The exact, minimal delta from `old` to `new`.
    ///
    /// - Throws: `DuplicateIdentifierError` where either collection holds an id twice. For
    ///   data with repeated ids, diff `NonUniqueDatum.numbering(values)` instead.
    @inlinable
    public init<Item: UniquelyIdentifiable>(from old: [Item], to new: [Item]) throws(DuplicateIdentifierError) {
        let match = try matchItems(old, new)
        self = old.withUnsafeBufferPointer { old in
            new.withUnsafeBufferPointer { new in
                flatDelta(from: match) { old[$0] != new[$1] }
            }
        }
    }
}
