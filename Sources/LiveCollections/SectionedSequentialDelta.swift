/// One step of a sectioned delta's item stage applied in sequence: positions are within a
/// section, on the list as the steps before left it.
package enum PathStep: Hashable, Sendable {
    case remove(section: Int, position: Int, count: Int)
    /// The item at `from` is taken out, and put back so that it stands at `to` (in the same
    /// section or another).
    case move(from: ItemPath, to: ItemPath)
    case insert(section: Int, position: Int, count: Int)
    /// Kept items with new content (positions in the final sections).
    case change(section: Int, position: Int, count: Int)
}

/// An item move of a sequential sectioned delta, as keyed clients apply it.
package struct SequentialPathMove: Hashable, Sendable {
    /// Where the item is after the section stage (the batch delta's move source).
    package let source: ItemPath
    /// The final section it goes to.
    package let section: Int
    /// Where (after the section stage) the kept item it then stands right before was; nil: the
    /// end of its section.
    package let before: ItemPath?
    package let from: ItemPath
    package let to: ItemPath

    package init(source: ItemPath, section: Int, before: ItemPath?, from: ItemPath, to: ItemPath) {
        self.source = source
        self.section = section
        self.before = before
        self.from = from
        self.to = to
    }
}

/// A sectioned delta as steps in sequence: the section stage (removals, moves, insertions of
/// whole sections, as `SequentialDelta`), then the item stage (removals, one move per batch
/// item move, possibly across sections, insertions, changes), then the sections whose own
/// content changed (their positions are final by then).
package struct SectionedSequentialDelta: Hashable, Sendable {
    /// The section stage without its changes.
    package var sectionSteps: [ListStep]
    package var sectionMoves: [SequentialMove]
    package var itemSteps: [PathStep]
    package var itemMoves: [SequentialPathMove]
    /// `.change` steps over final section positions, applied last.
    package var sectionChanges: [ListStep]
}

extension SectionedDelta {
    /// The delta as steps in sequence. `stageOneSizes`: each section's row count after the
    /// section stage (a surviving section's old count; an inserted one's new count);
    /// `finalSizes`: each new section's row count. Throws where they and the delta disagree.
    package func sequential(oldSectionCount: Int, stageOneSizes: [Int], finalSizes: [Int]) throws(ReplayError) -> SectionedSequentialDelta {
        var sectionStage = sectionDelta
        sectionStage.reloads = []
        let sections = sectionStage.sequential(oldCount: oldSectionCount)
        let sectionChanges = adjacentRuns(sectionDelta.reloads.map(\.target).sorted()).map {
            ListStep.change(position: $0.lowerBound, count: $0.count)
        }

        var steps: [PathStep] = []
        for (section, positions) in Self.bySection(itemDelta.deletions).reversed() {
            for run in adjacentRuns(positions).reversed() { steps.append(.remove(section: section, position: run.lowerBound, count: run.count)) }
        }
        let moves = try itemMoves(stageOneSizes: stageOneSizes, finalSizes: finalSizes)
        steps += moves.map { .move(from: $0.from, to: $0.to) }
        for (section, positions) in Self.bySection(itemDelta.insertions) {
            for run in adjacentRuns(positions) { steps.append(.insert(section: section, position: run.lowerBound, count: run.count)) }
        }
        for (section, positions) in Self.bySection(itemDelta.reloads.map(\.target).sorted()) {
            for run in adjacentRuns(positions) { steps.append(.change(section: section, position: run.lowerBound, count: run.count)) }
        }
        return SectionedSequentialDelta(
            sectionSteps: sections.steps, sectionMoves: sections.moves, itemSteps: steps, itemMoves: moves, sectionChanges: sectionChanges)
    }

    /// Ascending paths, grouped by section (ascending), each with its ascending item positions.
    private static func bySection(_ paths: [ItemPath]) -> [(Int, [Int])] {
        var groups: [(Int, [Int])] = []
        for path in paths {
            if let last = groups.last, last.0 == path.section {
                groups[groups.count - 1].1.append(path.item)
            } else {
                groups.append((path.section, [path.item]))
            }
        }
        return groups
    }

    /// The item moves, after the item removals: as for a flat delta (`Delta.sequential`), each
    /// kept item has a slot where it is now and each moved one a slot where it will be, right
    /// before the kept item that follows it in its final section; slots are laid out section by
    /// section, so a count of the slots in use from a section's first is a position in it.
    /// Throws where the delta and the sizes disagree (no delta the engine computed does).
    private func itemMoves(stageOneSizes: [Int], finalSizes: [Int]) throws(ReplayError) -> [SequentialPathMove] {
        guard !itemDelta.moves.isEmpty else { return [] }
        guard stageOneSizes.count == finalSizes.count else {
            throw ReplayError("\(stageOneSizes.count) sections after the section stage, \(finalSizes.count) at the end")
        }
        let inserted = Set(sectionDelta.insertions)
        let surviving = finalSizes.indices.filter { !inserted.contains($0) }
        let deleted = Set(itemDelta.deletions)
        var target = [ItemPath: ItemPath]()
        for move in itemDelta.moves { target[move.source] = move.target }
        let (order, stayerRanks) = try finalOrder(
            surviving: surviving, stageOneSizes: stageOneSizes, finalSizes: finalSizes, deleted: deleted, target: target)

        var ownSlot = [ItemPath: Int]()
        var endSlot = [ItemPath: Int]()
        var sectionStart = [Int](repeating: 0, count: finalSizes.count)
        var slotCount = 0
        func placeChain(in section: Int, endingBefore index: Int) {
            let rows = order[section]
            var first = index
            while first > 0 && target[rows[first - 1]] != nil { first -= 1 }
            for moved in rows[first..<index] {
                endSlot[moved] = slotCount
                slotCount += 1
            }
        }
        for section in surviving {
            sectionStart[section] = slotCount
            var stayer = 0
            for item in 0..<stageOneSizes[section] {
                let path = ItemPath(section: section, item: item)
                guard !deleted.contains(path) else { continue }
                if target[path] == nil {
                    // The stayers come in the order `stayerRanks` lists them, one rank each.
                    placeChain(in: section, endingBefore: stayerRanks[section][stayer])
                    stayer += 1
                }
                ownSlot[path] = slotCount
                slotCount += 1
            }
            placeChain(in: section, endingBefore: order[section].count)
        }

        var used = PrefixCounts(count: slotCount)
        for slot in ownSlot.values { used.add(1, at: slot) }
        var result: [SequentialPathMove] = []
        result.reserveCapacity(itemDelta.moves.count)
        for section in surviving.reversed() {
            let rows = order[section]
            for index in rows.indices.reversed() {
                let path = rows[index]
                guard target[path] != nil else { continue }
                // Every moved item placed in `order` has an end slot; its own slot exists where
                // its source is a kept row of a surviving section.
                guard let own = ownSlot[path], let end = endSlot[path] else {
                    throw ReplayError("item move source \(path) is not a kept item of a surviving section")
                }
                let from = ItemPath(section: path.section, item: used.prefix(own) - used.prefix(sectionStart[path.section]))
                used.add(-1, at: own)
                let to = ItemPath(section: section, item: used.prefix(end) - used.prefix(sectionStart[section]))
                used.add(1, at: end)
                result.append(
                    SequentialPathMove(source: path, section: section, before: index + 1 < rows.count ? rows[index + 1] : nil, from: from, to: to))
            }
        }
        return result
    }

    /// Each surviving section's kept items (paths after the section stage) in final order, and
    /// where in it each of the section's stayers (kept, not moved) stands, in the stayers'
    /// order after the section stage.
    private func finalOrder(
        surviving: [Int], stageOneSizes: [Int], finalSizes: [Int], deleted: Set<ItemPath>, target: [ItemPath: ItemPath]
    ) throws(ReplayError) -> (order: [[ItemPath]], stayerRanks: [[Int]]) {
        let insertedRows = Set(itemDelta.insertions)
        var order = [[ItemPath]](repeating: [], count: finalSizes.count)
        var stayerRanks = [[Int]](repeating: [], count: finalSizes.count)
        // Grouped once: a walk of every move for each section is quadratic where many sections
        // each receive a few moved items.
        var movesInto = [Int: [ItemPathPair]]()
        for move in itemDelta.moves { movesInto[move.target.section, default: []].append(move) }
        for section in surviving {
            var rows = [ItemPath?](repeating: nil, count: finalSizes[section])
            for move in movesInto[section] ?? [] {
                guard rows.indices.contains(move.target.item) else { throw ReplayError("item move target \(move.target) is out of range") }
                rows[move.target.item] = move.source
            }
            var stayers = (0..<stageOneSizes[section]).lazy.map { ItemPath(section: section, item: $0) }
                .filter { !deleted.contains($0) && target[$0] == nil }.makeIterator()
            for row in rows.indices where rows[row] == nil && !insertedRows.contains(ItemPath(section: section, item: row)) {
                guard let stayer = stayers.next() else { throw ReplayError("section \(section): too few kept items for its rows") }
                rows[row] = stayer
            }
            guard stayers.next() == nil else { throw ReplayError("section \(section): more kept items than rows") }
            let kept = rows.compactMap { $0 }
            order[section] = kept
            stayerRanks[section] = kept.indices.filter { target[kept[$0]] == nil }
        }
        return (order, stayerRanks)
    }
}
