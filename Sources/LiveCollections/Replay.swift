/// A delta that does not replay by the contract: it names what is wrong.
public struct ReplayError: Error, CustomStringConvertible, Equatable {
    /// What broke the contract, and where.
    public let description: String

    package init(_ description: String) { self.description = description }
}

/// Where a final position's element comes from.
private enum Origin<Position: Hashable>: Hashable {
    case old(Position)
    case new(Position)
}

private func requireAscending<P: Comparable>(_ positions: [P], _ name: String) throws(ReplayError) {
    for (a, b) in zip(positions, positions.dropFirst()) where !(a < b) {
        throw ReplayError("\(name) are not strictly ascending at \(a), \(b)")
    }
}

private func requireDistinct<P: Hashable>(_ positions: [P], _ name: String) throws(ReplayError) -> Set<P> {
    var seen = Set<P>()
    for position in positions where !seen.insert(position).inserted {
        throw ReplayError("\(name) name \(position) twice")
    }
    return seen
}

/// Fills `count` slots: `placed` ones first, the rest in order from `remaining`.
private func fill<P>(
    count: Int, placed: [(slot: Int, origin: Origin<P>)], remaining: [Origin<P>], where place: String
) throws(ReplayError) -> [Origin<P>] {
    var slots = [Origin<P>?](repeating: nil, count: count)
    for (slot, origin) in placed {
        guard slots.indices.contains(slot) else { throw ReplayError("\(place): position \(slot) is out of range 0..<\(count)") }
        slots[slot] = origin
    }
    var rest = remaining.makeIterator()
    var filled: [Origin<P>] = []
    filled.reserveCapacity(count)
    for slot in slots {
        if let origin = slot ?? rest.next() {
            filled.append(origin)
        } else {
            throw ReplayError("\(place): too few remaining items to fill \(count) positions")
        }
    }
    if rest.next() != nil { throw ReplayError("\(place): more remaining items than free positions") }
    return filled
}

/// Checks reloads name kept items at the place they landed, and answers where they landed:
/// the places that take the new version.
private func reloadedTargets<P: Hashable>(_ reloads: [PositionPair<P>], landedAt: [P: P]) throws(ReplayError) -> [P] {
    _ = try requireDistinct(reloads.map(\.source), "reload sources")
    for reload in reloads {
        guard landedAt[reload.source] == reload.target else {
            throw ReplayError("reload \(reload.source) -> \(reload.target) does not name a kept item where it landed")
        }
    }
    return reloads.map(\.target)
}

extension Delta where Position == Int {
    /// Applies the delta to `old` as a batch update would, then its reloads, taking inserted
    /// and reloaded elements from `new`. Checks every rule of the contract on the way.
    public func replay<Element>(old: [Element], new: [Element]) throws(ReplayError) -> [Element] {
        try replayOrigins(oldCount: old.count, newCount: new.count).map {
            switch $0 {
            case .old(let i): old[i]
            case .new(let j): new[j]
            }
        }
    }

    fileprivate func replayOrigins(oldCount: Int, newCount: Int) throws(ReplayError) -> [Origin<Int>] {
        try requireAscending(deletions, "deletions")
        try requireAscending(insertions, "insertions")
        if let bad = deletions.first(where: { !(0..<oldCount).contains($0) }) {
            throw ReplayError("deletion \(bad) is out of range 0..<\(oldCount)")
        }
        let deleted = Set(deletions)
        let inserted = Set(insertions)
        let movedOut = try requireDistinct(moves.map(\.source), "move sources")
        let movedIn = try requireDistinct(moves.map(\.target), "move targets")
        if let bad = moves.first(where: { !(0..<oldCount).contains($0.source) || deleted.contains($0.source) }) {
            throw ReplayError("move source \(bad.source) is out of range or deleted")
        }
        if let bad = movedIn.first(where: inserted.contains) { throw ReplayError("position \(bad) is inserted and a move target") }
        guard oldCount - deletions.count + insertions.count == newCount else {
            throw ReplayError("\(oldCount) - \(deletions.count) deletions + \(insertions.count) insertions != \(newCount)")
        }
        let placed =
            insertions.map { (slot: $0, origin: Origin<Int>.new($0)) }
            + moves.map { (slot: $0.target, origin: Origin<Int>.old($0.source)) }
        let remaining = (0..<oldCount).filter { !deleted.contains($0) && !movedOut.contains($0) }.map(Origin<Int>.old)
        var slots = try fill(count: newCount, placed: placed, remaining: remaining, where: "items")
        var landedAt = [Int: Int]()
        for (slot, origin) in slots.enumerated() { if case .old(let i) = origin { landedAt[i] = slot } }
        // Each target is where a kept item landed, so a slot.
        for target in try reloadedTargets(reloads, landedAt: landedAt) { slots[target] = .new(target) }
        return slots
    }
}

/// One section of a replayed sectioned collection.
public struct ReplayedSection<Section, Item> {
    /// The section value: the new one where it was inserted or reloaded, else the old one.
    public var section: Section
    /// The section's items after the delta.
    public var items: [Item]
}

extension ReplayedSection: Equatable where Section: Equatable, Item: Equatable {}

extension SectionedDelta {
    /// Applies the section stage, then the item stage, then the reloads, as the contract says,
    /// taking inserted and reloaded values from `new`. Checks every rule on the way.
    public func replay<Section: UniquelyIdentifiableSection>(
        old: [Section], new: [Section]
    ) throws(ReplayError) -> [ReplayedSection<Section, Section.Item>] {
        // Stage 1: sections, without their reloads (those apply after the batches).
        var sectionStage = sectionDelta
        sectionStage.reloads = []
        let sectionOrigins = try sectionStage.replayOrigins(oldCount: old.count, newCount: new.count)
        var landedAt = [Int: Int]()
        for (slot, origin) in sectionOrigins.enumerated() { if case .old(let i) = origin { landedAt[i] = slot } }
        var sectionValues = sectionOrigins
        for target in try reloadedTargets(sectionDelta.reloads, landedAt: landedAt) { sectionValues[target] = .new(target) }
        let insertedSections = Set(sectionDelta.insertions)
        // Rows after stage 1: a surviving section still holds its old items.
        let rowsAfterStage1: [Int] = sectionOrigins.map {
            switch $0 {
            case .old(let i): old[i].items.count
            case .new(let j): new[j].items.count
            }
        }

        // Stage 2: items.
        let (deleted, movedOut) = try checkItemStage(surviving: new.count, inserted: insertedSections, rows: rowsAfterStage1)
        var placedBySection = [Int: [(slot: Int, origin: Origin<ItemPath>)]]()
        for path in itemDelta.insertions { placedBySection[path.section, default: []].append((path.item, .new(path))) }
        for move in itemDelta.moves { placedBySection[move.target.section, default: []].append((move.target.item, .old(move.source))) }

        // Each final section's rows (none for inserted sections, which keep their new items).
        var finalRows = [[Origin<ItemPath>]](repeating: [], count: new.count)
        var itemLandedAt = [ItemPath: ItemPath]()
        for section in new.indices where !insertedSections.contains(section) {
            let remaining = (0..<rowsAfterStage1[section]).map { ItemPath(section: section, item: $0) }
                .filter { !deleted.contains($0) && !movedOut.contains($0) }.map(Origin<ItemPath>.old)
            let slots = try fill(
                count: new[section].items.count, placed: placedBySection[section] ?? [], remaining: remaining,
                where: "section \(section)")
            for (row, origin) in slots.enumerated() {
                if case .old(let source) = origin { itemLandedAt[source] = ItemPath(section: section, item: row) }
            }
            finalRows[section] = slots
        }
        // Each target is where a kept item landed, so a row of a surviving section.
        for target in try reloadedTargets(itemDelta.reloads, landedAt: itemLandedAt) {
            finalRows[target.section][target.item] = .new(target)
        }

        return try assemble(
            old: old, new: new, sectionValues: sectionValues, sectionOrigins: sectionOrigins, insertedSections: insertedSections, rows: finalRows)
    }

    /// Checks the item stage's paths against the sections after stage 1 (`rows`: each one's
    /// row count); answers the deleted and moved-out sources.
    private func checkItemStage(surviving: Int, inserted: Set<Int>, rows: [Int]) throws(ReplayError) -> (Set<ItemPath>, Set<ItemPath>) {
        func requireSurviving(_ path: ItemPath, _ name: String) throws(ReplayError) {
            guard (0..<surviving).contains(path.section), !inserted.contains(path.section) else {
                throw ReplayError("\(name) \(path) is not in a surviving section")
            }
        }
        try requireAscending(itemDelta.deletions, "item deletions")
        try requireAscending(itemDelta.insertions, "item insertions")
        for path in itemDelta.deletions + itemDelta.moves.map(\.source) {
            try requireSurviving(path, "item source")
            guard path.item >= 0 && path.item < rows[path.section] else {
                throw ReplayError("item source \(path) is out of range")
            }
        }
        for path in itemDelta.insertions + itemDelta.moves.map(\.target) { try requireSurviving(path, "item target") }
        let deleted = Set(itemDelta.deletions)
        let movedOut = try requireDistinct(itemDelta.moves.map(\.source), "item move sources")
        let movedIn = try requireDistinct(itemDelta.moves.map(\.target), "item move targets")
        if let bad = movedOut.first(where: deleted.contains) { throw ReplayError("item \(bad) is deleted and moved") }
        if let bad = movedIn.first(where: Set(itemDelta.insertions).contains) {
            throw ReplayError("item \(bad) is inserted and a move target")
        }
        return (deleted, movedOut)
    }

    /// The replayed sections: each one's value, and its items from the rows worked out.
    private func assemble<Section: UniquelyIdentifiableSection>(
        old: [Section], new: [Section], sectionValues: [Origin<Int>], sectionOrigins: [Origin<Int>], insertedSections: Set<Int>,
        rows finalRows: [[Origin<ItemPath>]]
    ) throws(ReplayError) -> [ReplayedSection<Section, Section.Item>] {
        var replayed: [ReplayedSection<Section, Section.Item>] = []
        for section in new.indices {
            let value: Section
            switch sectionValues[section] {
            case .old(let i): value = old[i]
            case .new(let j): value = new[j]
            }
            if insertedSections.contains(section) {
                replayed.append(ReplayedSection(section: value, items: new[section].items))
                continue
            }
            var items: [Section.Item] = []
            for origin in finalRows[section] {
                switch origin {
                case .old(let source):
                    // Sources address stage 1, where a surviving section still holds its old items.
                    guard case .old(let i) = sectionOrigins[source.section] else {
                        throw ReplayError("item source \(source) is in a section inserted by the section stage")
                    }
                    items.append(old[i].items[source.item])
                case .new(let target): items.append(new[target.section].items[target.item])
                }
            }
            replayed.append(ReplayedSection(section: value, items: items))
        }
        return replayed
    }
}
