import Foundation

/// What the adapter asks of a list view: UIKit's batch-update calls, which `UICollectionView`,
/// `UITableView`, `NSCollectionView` and `NSTableView` take with a few forwarding lines
/// (UIKitViews.swift, AppKitViews.swift), and which a test double takes on Linux.
///
/// Index paths are `[section, item]`.
@MainActor
public protocol BatchUpdatable: AnyObject {
    /// Runs `updates` as one animated batch (the data source is switched inside it), at once.
    func performBatch(_ updates: @escaping () -> Void)
    func deleteSections(_ sections: IndexSet)
    func insertSections(_ sections: IndexSet)
    func moveSection(_ section: Int, toSection newSection: Int)
    func reloadSections(_ sections: IndexSet)
    func deleteItems(at indexPaths: [IndexPath])
    func insertItems(at indexPaths: [IndexPath])
    func moveItem(at indexPath: IndexPath, to newIndexPath: IndexPath)
    func reloadItems(at indexPaths: [IndexPath])
    /// Has the cells at these index paths show their items again, keeping the cells (no
    /// reload animation, no new cell): `reconfigureItems(at:)` of UIKit (iOS 15, tvOS 15).
    /// By default, `reloadItems(at:)`.
    func reconfigureItems(at indexPaths: [IndexPath])
    /// Shows the data source afresh, without animation.
    func reloadData()
}

extension BatchUpdatable {
    /// Reloads the items, where a view cannot reconfigure its cells.
    public func reconfigureItems(at indexPaths: [IndexPath]) { reloadItems(at: indexPaths) }
}

/// How a changed row is shown again.
public enum RowRefresh: Sendable {
    /// `reloadItems`: a new cell, with the reload animation.
    case reload
    /// `reconfigureItems`: the same cell, configured again (no flash; cells keep their state).
    case reconfigure
}

/// Applies a delta to a list view in exactly the order the delta contract gives, switching the
/// data source inside each batch: for a flat list one batch (deletions, insertions, moves), then
/// the reloads; for sections, the sections in one batch, the rows in the next, reloads after.
/// A delta that does not take the view's data to the new data (checked by replaying it first)
/// is never sent to the view: the view is reloaded instead, so a wrong delta costs an animation,
/// never a crash.
@MainActor
public enum BatchUpdater {
    /// How a delta reached the view.
    public enum Outcome: Sendable, Equatable {
        /// Animated, in batches.
        case animated
        /// Reloaded: the answer had no delta (over the thresholds), or its delta did not fit.
        case reloaded(reason: String)
    }

    static func path(_ section: Int, _ item: Int) -> IndexPath { IndexPath(indexes: [section, item]) }
    static func path(_ place: ItemPath) -> IndexPath { path(place.section, place.item) }

    /// A flat list in section 0: `old` is what the view shows now, `new` what it must show;
    /// `setData` switches the data source; `refresh` says how changed rows are shown again.
    @discardableResult
    public static func apply<Item: Equatable>(
        _ answer: DeltaAnswer, from old: [Item], to new: [Item], on view: some BatchUpdatable, section: Int = 0, refresh: RowRefresh = .reload,
        setData: @escaping ([Item]) -> Void
    ) -> Outcome {
        guard let delta = answer.delta else { return reload(view, "the answer has no delta (\(answer.animation ?? "none"))") { setData(new) } }
        do {
            guard try BatchReplay.flat(old, delta, new: new) == new else { throw DeltaMismatch(description: "the replay differs from the new data") }
        } catch {
            return reload(view, "the delta does not fit: \(error)") { setData(new) }
        }
        view.performBatch {
            setData(new)
            view.deleteItems(at: delta.deletions.map { path(section, $0) })
            view.insertItems(at: delta.insertions.map { path(section, $0) })
            for move in delta.moves { view.moveItem(at: path(section, move.source), to: path(section, move.target)) }
        }
        if !delta.reloads.isEmpty { view.performBatch { refreshItems(delta.reloads.map { path(section, $0.target) }, on: view, refresh) } }
        return .animated
    }

    /// A sectioned list: the sections' batch (with each surviving section's old rows), the
    /// rows' batch, then reloads of rows (or reconfigures, by `refresh`) and of sections whose
    /// own fields changed.
    @discardableResult
    public static func apply<Item: Equatable>(
        _ answer: DeltaAnswer, from old: [LiveSection<Item>], to new: [LiveSection<Item>], on view: some BatchUpdatable,
        refresh: RowRefresh = .reload, setData: @escaping ([LiveSection<Item>]) -> Void
    ) -> Outcome {
        guard let sectionDelta = answer.sectionDelta, let itemDelta = answer.itemDelta else {
            return reload(view, "the answer has no delta (\(answer.sectionAnimation ?? "none"), \(answer.itemAnimation ?? "none"))") { setData(new) }
        }
        let stage: [LiveSection<Item>]
        do {
            stage = try BatchReplay.sectionStage(old, sectionDelta, new: new)
            let replayed = try BatchReplay.sectioned(old, sectionDelta: sectionDelta, itemDelta: itemDelta, new: new)
            guard replayed == new else { throw DeltaMismatch(description: "the replay differs from the new data") }
        } catch {
            return reload(view, "the delta does not fit: \(error)") { setData(new) }
        }
        if !(sectionDelta.deletions.isEmpty && sectionDelta.insertions.isEmpty && sectionDelta.moves.isEmpty) {
            view.performBatch {
                setData(stage)
                view.deleteSections(IndexSet(sectionDelta.deletions))
                view.insertSections(IndexSet(sectionDelta.insertions))
                for move in sectionDelta.moves { view.moveSection(move.source, toSection: move.target) }
            }
        }
        view.performBatch {
            setData(new)
            view.deleteItems(at: itemDelta.deletions.map(path))
            view.insertItems(at: itemDelta.insertions.map(path))
            for move in itemDelta.moves { view.moveItem(at: path(move.source), to: path(move.target)) }
        }
        let reloadedSections = IndexSet(sectionDelta.reloads.map(\.target))
        let reloadedItems = itemDelta.reloads.map(\.target).filter { !reloadedSections.contains($0.section) }.map(path)
        if !reloadedSections.isEmpty || !reloadedItems.isEmpty {
            view.performBatch {
                if !reloadedSections.isEmpty { view.reloadSections(reloadedSections) }
                if !reloadedItems.isEmpty { refreshItems(reloadedItems, on: view, refresh) }
            }
        }
        return .animated
    }

    private static func refreshItems(_ paths: [IndexPath], on view: some BatchUpdatable, _ refresh: RowRefresh) {
        switch refresh {
        case .reload: view.reloadItems(at: paths)
        case .reconfigure: view.reconfigureItems(at: paths)
        }
    }

    private static func reload(_ view: some BatchUpdatable, _ reason: String, _ setData: () -> Void) -> Outcome {
        setData()
        view.reloadData()
        return .reloaded(reason: reason)
    }
}
