/// A delta that does not fit the collection it is applied to.
public struct DeltaMismatch: Error, Sendable, CustomStringConvertible {
    /// What does not fit, and where.
    public var description: String
}

/// UIKit's reading of a batch (docs/deltas.md), on plain arrays: the tests and the holders use
/// it to check a delta against the collection an event carries before anything is shown.
public enum BatchReplay {
    /// Deletions at old positions; insertions and move targets at new ones; the other
    /// survivors in order in the places left; reloads at their targets after. `new` gives the
    /// inserted and reloaded items.
    public static func flat<Item>(_ old: [Item], _ delta: Delta<Int>, new: [Item]) throws -> [Item] {
        var result = [Item?](repeating: nil, count: new.count)
        var gone = Set<Int>()
        for position in delta.deletions {
            guard old.indices.contains(position), gone.insert(position).inserted else { throw DeltaMismatch(description: "deletion \(position)") }
        }
        for position in delta.insertions {
            guard new.indices.contains(position), result[position] == nil else { throw DeltaMismatch(description: "insertion \(position)") }
            result[position] = new[position]
        }
        for move in delta.moves {
            guard old.indices.contains(move.source), gone.insert(move.source).inserted, new.indices.contains(move.target), result[move.target] == nil
            else { throw DeltaMismatch(description: "move \(move.source) to \(move.target)") }
            result[move.target] = old[move.source]
        }
        var stayers = old.indices.lazy.filter { !gone.contains($0) }.makeIterator()
        for position in result.indices where result[position] == nil {
            guard let stayer = stayers.next() else { throw DeltaMismatch(description: "position \(position) has no item") }
            result[position] = old[stayer]
        }
        guard stayers.next() == nil else { throw DeltaMismatch(description: "items are left without a position") }
        for reload in delta.reloads {
            guard new.indices.contains(reload.target) else { throw DeltaMismatch(description: "reload \(reload.target)") }
            result[reload.target] = new[reload.target]
        }
        return result.map { $0! }
    }

    /// The same where an event carries only the rows the delta inserts or changes
    /// (`FollowOptions.rows` `.changed`): `rows` at its insertions (ascending), then at its
    /// reloads' targets, among `newCount` rows after it; every other row is one `old` holds.
    public static func flat<Item>(_ old: [Item], _ delta: Delta<Int>, rows: [Item], newCount: Int?) throws -> [Item] {
        let positions = delta.insertions + delta.reloads.map(\.target)
        guard let newCount, newCount >= 0, rows.count == positions.count else {
            throw DeltaMismatch(description: "\(rows.count) rows for \(positions.count) insertions and reloads of \(newCount ?? -1)")
        }
        var new = [Item?](repeating: nil, count: newCount)
        for (row, position) in zip(rows, positions) {
            guard new.indices.contains(position) else { throw DeltaMismatch(description: "row position \(position) of \(newCount)") }
            new[position] = row
        }
        let replayed = try flat(old.map { Optional($0) }, delta, new: new)
        return try replayed.map { row in
            guard let row else { throw DeltaMismatch(description: "a position has no row") }
            return row
        }
    }

    /// The section stage of a sectioned batch: sections in their new places, a surviving one
    /// with its old rows (and its new fields), an inserted one with its new rows.
    public static func sectionStage<Item>(_ old: [LiveSection<Item>], _ delta: Delta<Int>, new: [LiveSection<Item>]) throws -> [LiveSection<Item>] {
        let placed = try flat(
            Array(old.indices).map { Optional($0) }, Delta(deletions: delta.deletions, insertions: delta.insertions, moves: delta.moves),
            new: new.map { _ in nil })
        return placed.enumerated().map { position, source in
            guard let source else { return new[position] }
            var section = new[position]
            section.items = old[source].items
            return section
        }
    }

    /// Both stages: sections, then rows by `{section, item}` (deletions and move sources in the
    /// section stage's places, insertions and move targets in the new ones), reloads after.
    public static func sectioned<Item>(
        _ old: [LiveSection<Item>], sectionDelta: Delta<Int>, itemDelta: Delta<ItemPath>, new: [LiveSection<Item>]
    ) throws -> [LiveSection<Item>] {
        let stage = try sectionStage(old, sectionDelta, new: new)
        var result = new.map { [Item?](repeating: nil, count: $0.items.count) }
        var gone = stage.map { _ in Set<Int>() }
        func valid(_ path: ItemPath, in lists: [[Item]]) -> Bool {
            lists.indices.contains(path.section) && lists[path.section].indices.contains(path.item)
        }
        let before = stage.map(\.items)
        let after = new.map(\.items)
        for path in itemDelta.deletions {
            guard valid(path, in: before), gone[path.section].insert(path.item).inserted else { throw DeltaMismatch(description: "deletion \(path)") }
        }
        for path in itemDelta.insertions {
            guard valid(path, in: after), result[path.section][path.item] == nil else { throw DeltaMismatch(description: "insertion \(path)") }
            result[path.section][path.item] = after[path.section][path.item]
        }
        for move in itemDelta.moves {
            guard valid(move.source, in: before), gone[move.source.section].insert(move.source.item).inserted, valid(move.target, in: after),
                result[move.target.section][move.target.item] == nil
            else { throw DeltaMismatch(description: "move \(move.source) to \(move.target)") }
            result[move.target.section][move.target.item] = before[move.source.section][move.source.item]
        }
        for section in result.indices {
            var stayers = before[section].indices.lazy.filter { !gone[section].contains($0) }.makeIterator()
            for position in result[section].indices where result[section][position] == nil {
                guard let stayer = stayers.next() else { throw DeltaMismatch(description: "section \(section) position \(position) has no item") }
                result[section][position] = before[section][stayer]
            }
            guard stayers.next() == nil else { throw DeltaMismatch(description: "section \(section) has items without a position") }
        }
        for reload in itemDelta.reloads {
            guard valid(reload.target, in: after) else { throw DeltaMismatch(description: "reload \(reload.target)") }
            result[reload.target.section][reload.target.item] = after[reload.target.section][reload.target.item]
        }
        return stage.enumerated().map { index, section in
            var section = section
            section.items = result[index].map { $0! }
            return section
        }
    }
}
