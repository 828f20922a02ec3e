import LiveCollections

/// What a subscriber asks batch and sequential deltas, which give positions only, to carry
/// (`rows`): the collection after the change whole, or only its rows the delta inserts or
/// changes, for a client that applies the delta to the rows it holds.
enum CarriedRows: String, Sendable, Hashable {
    case all
    case changed
}

/// What an event carries besides its delta.
enum CarriedCollection: Sendable, Equatable {
    /// Nothing: the format carries the content it changes (`keyed`, `jsonPatch`).
    case none
    /// The collection after the change: `items`, or `sections`.
    case whole
    /// A flat delta's `rows`: the new rows it inserts or changes, as `ChangedRows` orders them
    /// (sectioned sessions carry their `sections` whole).
    case changedRows
}

/// The rows a flat delta inserts or changes, in the order a client meets them while it
/// applies the delta: for `batch`, the rows at its `insertions` (ascending), then at its
/// reloads' targets, in their order; for `sequential`, the rows of each `insert` and `change`
/// operation, operation by operation. So a 10-row scroll of a window carries the 10 rows that
/// enter it, not the 50 it shows.
enum ChangedRows {
    static func of(_ delta: IndexDelta, format: DeltaFormat, oldCount: Int, in new: ItemRows) -> [JSONItem] {
        var rows: [JSONItem] = []
        switch format {
        case .sequential:
            for step in delta.sequential(oldCount: oldCount).steps {
                switch step {
                case .insert(let position, let count), .change(let position, let count): rows += new[position..<position + count]
                case .remove, .move: break
                }
            }
        default:
            rows.reserveCapacity(delta.insertions.count + delta.reloads.count)
            for position in delta.insertions { rows.append(new[position]) }
            for reload in delta.reloads { rows.append(new[reload.target]) }
        }
        return rows
    }
}
