/// One step of a flat delta applied in sequence, as Android's `ListUpdateCallback` and RFC
/// 6902's operations apply them: each position refers to the list as the steps before it left
/// it.
package enum ListStep: Hashable, Sendable {
    /// `count` elements from `position` leave.
    case remove(position: Int, count: Int)
    /// The element at `from` is taken out, and put back so that it stands at `to`.
    case move(from: Int, to: Int)
    /// `count` new elements arrive, the first at `position`.
    case insert(position: Int, count: Int)
    /// `count` elements from `position`, all kept, have new content (positions in the final list).
    case change(position: Int, count: Int)
}

/// A move of a sequential delta, as keyed clients apply it: which element, and what it then
/// stands right before.
package struct SequentialMove: Hashable, Sendable {
    /// The element's position in the old list.
    package let source: Int
    /// The old position of the kept element it stands right before once moved; nil: the end.
    package let before: Int?
    package let from: Int
    package let to: Int

    package init(source: Int, before: Int?, from: Int, to: Int) {
        self.source = source
        self.before = before
        self.from = from
        self.to = to
    }
}

/// A flat delta as steps in sequence: removals (from the highest position down, adjacent ones
/// as one range), then one move per batch move, then insertions (from the lowest up, adjacent
/// ones as one range), then changes (adjacent ones as one range). Moves are made in
/// descending order of where the elements end, each put right before the element that follows
/// it in the end (or at the end), so each lands where it belongs with one move: exactly as
/// many moves as the batch delta has.
package struct SequentialDelta: Hashable, Sendable {
    package var steps: [ListStep]
    /// The moves among `steps`, in the same order, with the elements they move.
    package var moves: [SequentialMove]
}

extension Delta where Position == Int {
    /// The delta as steps in sequence (see `SequentialDelta`), for a list of `oldCount` elements.
    /// O((n + m) log n).
    package func sequential(oldCount: Int) -> SequentialDelta {
        var steps: [ListStep] = []
        for run in adjacentRuns(deletions).reversed() { steps.append(.remove(position: run.lowerBound, count: run.count)) }
        let moves = sequentialMoves(oldCount: oldCount)
        steps += moves.map { .move(from: $0.from, to: $0.to) }
        for run in adjacentRuns(insertions) { steps.append(.insert(position: run.lowerBound, count: run.count)) }
        for run in adjacentRuns(reloads.map(\.target).sorted()) { steps.append(.change(position: run.lowerBound, count: run.count)) }
        return SequentialDelta(steps: steps, moves: moves)
    }

    /// The moves, after the removals: every kept element has a slot where it stands now (its
    /// old place) and each moved one a slot where it will stand (right before the kept element
    /// that follows it in the end); a count of the slots in use before a slot is a position.
    private func sequentialMoves(oldCount: Int) -> [SequentialMove] {
        guard !moves.isEmpty else { return [] }
        var isDeleted = [Bool](repeating: false, count: oldCount)
        for position in deletions { isDeleted[position] = true }
        var target = [Int](repeating: -1, count: oldCount)
        for move in moves { target[move.source] = move.target }
        // The kept elements in their final order (old positions): moved ones at their targets,
        // the others filling the other places in their old order.
        let kept = (0..<oldCount).filter { !isDeleted[$0] }
        var finalOrder = [Int](repeating: -1, count: kept.count + insertions.count)
        for move in moves { finalOrder[move.target] = move.source }
        var isInserted = [Bool](repeating: false, count: finalOrder.count)
        for position in insertions { isInserted[position] = true }
        var stayers = kept.lazy.filter { target[$0] < 0 }.makeIterator()
        for slot in finalOrder.indices where finalOrder[slot] < 0 && !isInserted[slot] { finalOrder[slot] = stayers.next()! }
        let order = finalOrder.enumerated().filter { !isInserted[$0.offset] }.map(\.element)
        var rank = [Int](repeating: -1, count: oldCount)
        for (index, element) in order.enumerated() { rank[element] = index }

        // Slots: for each element that stays, in old order, the slots of the moved elements
        // that end right before it, then its own; then the moved ones that end last.
        var ownSlot = [Int](repeating: -1, count: oldCount)
        var endSlot = [Int](repeating: -1, count: oldCount)
        var slotCount = 0
        func placeChain(endingBefore index: Int) {
            var first = index
            while first > 0 && target[order[first - 1]] >= 0 { first -= 1 }
            for moved in order[first..<index] {
                endSlot[moved] = slotCount
                slotCount += 1
            }
        }
        for element in kept {
            if target[element] < 0 { placeChain(endingBefore: rank[element]) }
            ownSlot[element] = slotCount
            slotCount += 1
        }
        placeChain(endingBefore: order.count)

        var used = PrefixCounts(count: slotCount)
        for element in kept { used.add(1, at: ownSlot[element]) }
        var result: [SequentialMove] = []
        result.reserveCapacity(moves.count)
        for index in order.indices.reversed() where target[order[index]] >= 0 {
            let element = order[index]
            let from = used.prefix(ownSlot[element])
            used.add(-1, at: ownSlot[element])
            let to = used.prefix(endSlot[element])
            used.add(1, at: endSlot[element])
            result.append(SequentialMove(source: element, before: index + 1 < order.count ? order[index + 1] : nil, from: from, to: to))
        }
        return result
    }
}

/// Ascending positions as runs of adjacent ones.
func adjacentRuns(_ positions: [Int]) -> [ClosedRange<Int>] {
    var runs: [ClosedRange<Int>] = []
    for position in positions {
        if let last = runs.last, last.upperBound + 1 == position {
            runs[runs.count - 1] = last.lowerBound...position
        } else {
            runs.append(position...position)
        }
    }
    return runs
}

/// Counts over positions with prefix sums in O(log n) (a Fenwick tree).
struct PrefixCounts {
    private var tree: [Int]

    init(count: Int) { tree = [Int](repeating: 0, count: count + 1) }

    mutating func add(_ value: Int, at position: Int) {
        var index = position + 1
        while index < tree.count {
            tree[index] += value
            index += index & -index
        }
    }

    /// The sum over positions before `position`.
    func prefix(_ position: Int) -> Int {
        var sum = 0
        var index = position
        while index > 0 {
            sum += tree[index]
            index -= index & -index
        }
        return sum
    }
}
