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
                guard count > 0, position >= 0, position + count <= list.count else { throw Failure(description: "\(operation) on \(list.count) rows") }
                list.removeSubrange(position..<position + count)
            case .move(let from, let to):
                guard list.indices.contains(from), (0..<list.count).contains(to) else { throw Failure(description: "\(operation) on \(list.count) rows") }
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
