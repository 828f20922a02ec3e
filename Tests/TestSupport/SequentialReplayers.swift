/// Replayers for sequential deltas, written from the appliers' documentation, not from the code
/// that produces the steps: they are how a client would apply them.

/// Android's `ListUpdateCallback` (as `RecyclerView.Adapter`'s `notifyItemRange…` calls read
/// it): each operation acts on the list as the ones before it left it; `onMoved(from, to)`
/// takes the item at `from` out and puts it back so that it is at `to`; inserted and changed
/// rows read the adapter's new data at their positions.
public enum AndroidReplayer {
    public enum Operation: Equatable {
        case remove(position: Int, count: Int)
        case move(from: Int, to: Int)
        case insert(position: Int, count: Int)
        case change(position: Int, count: Int)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The list after the operations, and the positions that were told they changed.
    public static func apply<T>(_ operations: [Operation], to old: [T], new: [T]) throws -> (list: [T], changed: [Int]) {
        var list = old
        var changed: [Int] = []
        for operation in operations {
            switch operation {
            case .remove(let position, let count):
                guard count > 0, position >= 0, position + count <= list.count else {
                    throw Failure(description: "\(operation) on \(list.count) rows")
                }
                list.removeSubrange(position..<position + count)
            case .move(let from, let to):
                guard list.indices.contains(from), (0..<list.count).contains(to) else {
                    throw Failure(description: "\(operation) on \(list.count) rows")
                }
                let row = list.remove(at: from)
                list.insert(row, at: to)
            case .insert(let position, let count):
                guard count > 0, position >= 0, position <= list.count, position + count <= new.count else {
                    throw Failure(description: "\(operation) on \(list.count) rows")
                }
                list.insert(contentsOf: new[position..<position + count], at: position)
            case .change(let position, let count):
                guard count > 0, position >= 0, position + count <= list.count, position + count <= new.count else {
                    throw Failure(description: "\(operation) on \(list.count) rows")
                }
                for row in position..<position + count {
                    list[row] = new[row]
                    changed.append(row)
                }
            }
        }
        return (list, changed)
    }
}

/// A keyed list as the DOM or a keyed React/Vue list holds it: elements by key, moved and
/// inserted before another key (or at the end), removed and updated by key.
public enum KeyedReplayer {
    public enum Operation<Key: Hashable, Item>: Equatable where Item: Equatable {
        case remove(Key)
        case move(Key, before: Key?)
        case insert(Key, before: Key?, item: Item)
        case update(Key, item: Item)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func apply<Key: Hashable, Item: Equatable>(
        _ operations: [Operation<Key, Item>], to old: [(key: Key, item: Item)]
    ) throws -> [(key: Key, item: Item)] {
        var list = old
        func index(of key: Key) throws -> Int {
            guard let index = list.firstIndex(where: { $0.key == key }) else { throw Failure(description: "no element \(key)") }
            return index
        }
        func place(_ element: (key: Key, item: Item), before: Key?) throws {
            if let before { list.insert(element, at: try index(of: before)) } else { list.append(element) }
        }
        for operation in operations {
            switch operation {
            case .remove(let key): list.remove(at: try index(of: key))
            case .move(let key, let before):
                let element = list.remove(at: try index(of: key))
                try place(element, before: before)
            case .insert(let key, let before, let item):
                guard !list.contains(where: { $0.key == key }) else { throw Failure(description: "\(key) is already there") }
                try place((key, item), before: before)
            case .update(let key, let item): list[try index(of: key)].item = item
            }
        }
        return list
    }
}

/// Sections applied in sequence, as a list of sections whose rows an adapter notifies: section
/// operations first (an inserted section arrives with its new rows), then row operations within
/// sections (a move may cross sections), then sections whose own content changed.
public enum SectionedReplayer {
    public enum Operation {
        case removeSections(position: Int, count: Int)
        case moveSection(from: Int, to: Int)
        case insertSections(position: Int, count: Int)
        case changeSections(position: Int, count: Int)
        case remove(section: Int, position: Int, count: Int)
        case move(from: (section: Int, item: Int), to: (section: Int, item: Int))
        case insert(section: Int, position: Int, count: Int)
        case change(section: Int, position: Int, count: Int)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// `sections` as (header, rows); inserted and changed ones read `new`.
    public static func apply<Header, Row>(
        _ operations: [Operation], to old: [(header: Header, rows: [Row])], new: [(header: Header, rows: [Row])]
    ) throws -> [(header: Header, rows: [Row])] {
        var sections = old
        func check(_ condition: Bool, _ operation: Operation) throws {
            if !condition { throw Failure(description: "\(operation) does not fit") }
        }
        for operation in operations {
            switch operation {
            case .removeSections(let position, let count):
                try check(position >= 0 && count > 0 && position + count <= sections.count, operation)
                sections.removeSubrange(position..<position + count)
            case .moveSection(let from, let to):
                try check(sections.indices.contains(from) && (0..<sections.count).contains(to), operation)
                sections.insert(sections.remove(at: from), at: to)
            case .insertSections(let position, let count):
                try check(position >= 0 && count > 0 && position <= sections.count && position + count <= new.count, operation)
                sections.insert(contentsOf: new[position..<position + count], at: position)
            case .changeSections(let position, let count):
                try check(position >= 0 && count > 0 && position + count <= min(sections.count, new.count), operation)
                for index in position..<position + count { sections[index].header = new[index].header }
            case .remove(let section, let position, let count):
                try check(
                    sections.indices.contains(section) && position >= 0 && count > 0 && position + count <= sections[section].rows.count, operation)
                sections[section].rows.removeSubrange(position..<position + count)
            case .move(let from, let to):
                try check(sections.indices.contains(from.section) && sections[from.section].rows.indices.contains(from.item), operation)
                let row = sections[from.section].rows.remove(at: from.item)
                try check(sections.indices.contains(to.section) && (0...sections[to.section].rows.count).contains(to.item), operation)
                sections[to.section].rows.insert(row, at: to.item)
            case .insert(let section, let position, let count):
                try check(sections.indices.contains(section) && new.indices.contains(section), operation)
                try check(
                    position >= 0 && count > 0 && position <= sections[section].rows.count && position + count <= new[section].rows.count, operation)
                sections[section].rows.insert(contentsOf: new[section].rows[position..<position + count], at: position)
            case .change(let section, let position, let count):
                try check(sections.indices.contains(section) && new.indices.contains(section), operation)
                try check(position >= 0 && count > 0 && position + count <= min(sections[section].rows.count, new[section].rows.count), operation)
                for row in position..<position + count { sections[section].rows[row] = new[section].rows[row] }
            }
        }
        return sections
    }
}
