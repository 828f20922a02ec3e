/// How an answer spells its delta (option `format`).
package enum DeltaFormat: String, CaseIterable, Sendable {
    /// UIKit's batch form: deletions in old positions, insertions in new ones, moves, reloads
    /// applied after (`delta`).
    case batch
    /// Android's `ListUpdateCallback` operations, each on the list as the ones before it left
    /// it (member `sequential`).
    case sequential
    /// An RFC 6902 patch from the old document to the new one, item content included (member `jsonPatch`).
    case jsonPatch
    /// Operations by id, for keyed web lists: remove, move before, insert before, update
    /// (member `keyed`).
    case keyed

    /// The answer's member that holds the delta.
    var memberName: StaticString {
        switch self {
        case .batch: "delta"
        case .sequential: "sequential"
        case .jsonPatch: "jsonPatch"
        case .keyed: "keyed"
        }
    }
}
