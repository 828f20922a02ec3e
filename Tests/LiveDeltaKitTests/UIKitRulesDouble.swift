import Foundation
import LiveDeltaKit

/// A list view that enforces UIKit's documented batch-update rules (UICollectionView and
/// UITableView `performBatchUpdates`; ../shared/design/platform-list-rules.md) and fails, with
/// UIKit's reason, exactly where UIKit would throw NSInternalInconsistencyException:
/// - deletions, move sources and reloads address the state before the batch; insertions and
///   move targets the state after it; any index out of its range;
/// - each section's count after the batch must be `before - deleted - moved out + inserted +
///   moved in`, and the number of sections likewise;
/// - an index path (or section) deleted or inserted twice, moved from or to twice; a delete and
///   a reload of one index path; a delete and a move from one; an insert and a move to one;
///   a reload of a moved item; a row deleted from, or moved out of, a section being deleted; a
///   row inserted into, or moved into, a section being inserted.
/// It shows what the batch leaves: rows kept keep their old content until reloaded, so a
/// missing reload shows as a row that differs from the data source.
@MainActor
final class UIKitRulesDouble<Item: Equatable>: BatchUpdatable {
    /// What the view shows.
    private(set) var shown: [[Item]]
    /// The data source, as the view reads it when a batch ends (switched inside the batch).
    let dataSource: () -> [[Item]]
    /// Each broken rule, in order; empty where UIKit would have accepted every batch.
    private(set) var violations: [String] = []
    private(set) var batches = 0
    private(set) var reloads = 0
    /// Rows reconfigured, in all.
    private(set) var reconfigured = 0

    private var batch: Batch?

    struct Batch {
        var deleteSections: [Int] = []
        var insertSections: [Int] = []
        var moveSections: [(from: Int, to: Int)] = []
        var reloadSections: [Int] = []
        var deleteItems: [IndexPath] = []
        var insertItems: [IndexPath] = []
        var moveItems: [(from: IndexPath, to: IndexPath)] = []
        var reloadItems: [IndexPath] = []
    }

    init(showing rows: [[Item]], dataSource: @escaping () -> [[Item]]) {
        shown = rows
        self.dataSource = dataSource
    }

    func performBatch(_ updates: @escaping () -> Void) {
        batch = Batch()
        updates()
        let done = batch!
        batch = nil
        batches += 1
        let after = dataSource()
        if let problem = Self.check(done, before: shown.map(\.count), after: after.map(\.count)) {
            violations.append(problem)
            // UIKit would have thrown; the double shows the data source so later batches start sane.
            shown = after
            return
        }
        shown = Self.result(of: done, before: shown, after: after)
    }

    private func record(_ change: (inout Batch) -> Void) {
        guard batch != nil else {
            violations.append("an update outside performBatchUpdates")
            return
        }
        change(&batch!)
    }

    func deleteSections(_ sections: IndexSet) { record { $0.deleteSections += sections } }
    func insertSections(_ sections: IndexSet) { record { $0.insertSections += sections } }
    func moveSection(_ section: Int, toSection newSection: Int) { record { $0.moveSections.append((section, newSection)) } }
    func reloadSections(_ sections: IndexSet) { record { $0.reloadSections += sections } }
    func deleteItems(at indexPaths: [IndexPath]) { record { $0.deleteItems += indexPaths } }
    func insertItems(at indexPaths: [IndexPath]) { record { $0.insertItems += indexPaths } }
    func moveItem(at indexPath: IndexPath, to newIndexPath: IndexPath) { record { $0.moveItems.append((indexPath, newIndexPath)) } }
    func reloadItems(at indexPaths: [IndexPath]) { record { $0.reloadItems += indexPaths } }
    /// Under UIKit's rules for a reload (an index path before the batch, never deleted or
    /// moved in it); the cell shows the data source's item again, as a reload's would.
    func reconfigureItems(at indexPaths: [IndexPath]) {
        reconfigured += indexPaths.count
        record { $0.reloadItems += indexPaths }
    }

    func reloadData() {
        reloads += 1
        shown = dataSource()
    }

    /// The first rule the batch breaks, as UIKit words it; nil where it breaks none.
    static func check(_ batch: Batch, before: [Int], after: [Int]) -> String? {
        func duplicate<T: Hashable>(_ values: [T]) -> T? {
            var seen = Set<T>()
            return values.first { !seen.insert($0).inserted }
        }
        let deletedSections = Set(batch.deleteSections)
        let insertedSections = Set(batch.insertSections)
        for section in batch.deleteSections where !before.indices.contains(section) {
            return "attempt to delete section \(section), but there are only \(before.count) sections before the update"
        }
        for section in batch.insertSections where !after.indices.contains(section) {
            return "attempt to insert section \(section) but there are only \(after.count) sections after the update"
        }
        if let section = duplicate(batch.deleteSections + batch.moveSections.map(\.from) + batch.reloadSections) {
            return "attempt to delete, move or reload section \(section) more than once"
        }
        if let section = duplicate(batch.insertSections + batch.moveSections.map(\.to)) {
            return "attempt to insert or move to section \(section) more than once"
        }
        for move in batch.moveSections where !before.indices.contains(move.from) || !after.indices.contains(move.to) {
            return "attempt to move section \(move.from) to \(move.to), out of range"
        }
        for section in batch.reloadSections where !before.indices.contains(section) { return "attempt to reload section \(section), out of range" }
        guard after.count == before.count - deletedSections.count + insertedSections.count else {
            return
                "invalid number of sections: \(after.count) after, \(before.count) before, \(deletedSections.count) deleted, \(insertedSections.count) inserted"
        }
        let deleted = batch.deleteItems
        let inserted = batch.insertItems
        for path in deleted + batch.moveItems.map(\.from) + batch.reloadItems {
            guard before.indices.contains(path[0]), (0..<before[path[0]]).contains(path[1]) else {
                return
                    "attempt to delete, move or reload item \(path[1]) from section \(path[0]), which holds \(before.indices.contains(path[0]) ? before[path[0]] : 0) items before the update"
            }
            if deletedSections.contains(path[0]) {
                return "attempt to delete, move or reload item \(path) of section \(path[0]), which is being deleted"
            }
        }
        for path in inserted + batch.moveItems.map(\.to) {
            guard after.indices.contains(path[0]), (0..<after[path[0]]).contains(path[1]) else {
                return
                    "attempt to insert or move item \(path[1]) into section \(path[0]), which holds \(after.indices.contains(path[0]) ? after[path[0]] : 0) items after the update"
            }
            if insertedSections.contains(path[0]) { return "attempt to insert or move item \(path) into section \(path[0]), which is being inserted" }
        }
        if let path = duplicate(deleted) { return "attempt to delete item \(path) more than once" }
        if let path = duplicate(inserted) { return "attempt to insert item \(path) more than once" }
        if let path = duplicate(batch.moveItems.map(\.from)) { return "attempt to move item \(path) more than once" }
        if let path = duplicate(batch.moveItems.map(\.to)) { return "attempt to move two items to \(path)" }
        if let path = Set(deleted).intersection(batch.reloadItems).first { return "attempt to delete and reload the same index path \(path)" }
        if let path = Set(deleted).intersection(batch.moveItems.map(\.from)).first {
            return "attempt to perform a delete and a move from the same index path \(path)"
        }
        if let path = Set(inserted).intersection(batch.moveItems.map(\.to)).first {
            return "attempt to perform an insert and a move to the same index path \(path)"
        }
        if let path = Set(batch.reloadItems).intersection(batch.moveItems.map(\.from)).first {
            return "attempt to reload and move the same index path \(path)"
        }
        // Each section's count: where each section after comes from.
        let origins = origin(of: batch, before: before.count, after: after.count)
        for (section, origin) in origins.enumerated() {
            guard let origin else { continue }
            let count =
                before[origin] - deleted.filter { $0[0] == origin }.count - batch.moveItems.filter { $0.from[0] == origin }.count
                + inserted.filter { $0[0] == section }.count + batch.moveItems.filter { $0.to[0] == section }.count
            guard count == after[section] else {
                return
                    "invalid number of items in section \(section): \(after[section]) after the update, \(before[origin]) before, plus or minus those inserted or deleted and moved in or out (\(count))"
            }
        }
        return nil
    }

    /// For each section after the batch, the section before it comes from (nil: inserted).
    static func origin(of batch: Batch, before: Int, after: Int) -> [Int?] {
        var result = [Int?](repeating: nil, count: after)
        let moved = Set(batch.moveSections.map(\.from))
        for move in batch.moveSections { result[move.to] = move.from }
        var stayers = (0..<before).filter { !batch.deleteSections.contains($0) && !moved.contains($0) }.makeIterator()
        for section in 0..<after where result[section] == nil && !batch.insertSections.contains(section) { result[section] = stayers.next() }
        return result
    }

    /// What the view shows after a batch UIKit accepted.
    static func result(of batch: Batch, before: [[Item]], after: [[Item]]) -> [[Item]] {
        let origins = origin(of: batch, before: before.count, after: after.count)
        var shown: [[Item]] = []
        for (section, origin) in origins.enumerated() {
            guard let origin else {
                shown.append(after[section])
                continue
            }
            var rows = [Item?](repeating: nil, count: after[section].count)
            for path in batch.insertItems where path[0] == section { rows[path[1]] = after[section][path[1]] }
            for move in batch.moveItems where move.to[0] == section { rows[move.to[1]] = before[move.from[0]][move.from[1]] }
            let leaving = Set(
                batch.deleteItems.filter { $0[0] == origin }.map { $0[1] } + batch.moveItems.filter { $0.from[0] == origin }.map { $0.from[1] })
            // Where each row that stays lands: the places left, in order.
            var landed: [Int: Int] = [:]
            var stayers = before[origin].indices.filter { !leaving.contains($0) }.makeIterator()
            for index in rows.indices where rows[index] == nil {
                let stayer = stayers.next()!
                rows[index] = before[origin][stayer]
                landed[stayer] = index
            }
            // A reloaded row (addressed before the batch) reads the data source again where it landed.
            for path in batch.reloadItems where path[0] == origin {
                if let index = landed[path[1]] { rows[index] = after[section][index] }
            }
            if batch.reloadSections.contains(origin) { rows = after[section].map { $0 } }
            shown.append(rows.map { $0! })
        }
        return shown
    }
}
