import Foundation

/// The edits of a diffable data source's snapshot that `LiveList.snapshot` makes:
/// `NSDiffableDataSourceSnapshot`'s own (UIKitViews.swift conforms it), so the snapshot is
/// built, and checked, on every platform.
///
/// A diffable data source takes a whole snapshot and works out the batch itself, by
/// identifier: `apply(_:animatingDifferences:)` has no way to take the server's delta or its
/// order, so the moves it animates are UIKit's. What it cannot see is a row whose content
/// changed under the same identifier; the server's delta names those rows, and the snapshot
/// marks them (`reconfigureItems`, or `reloadItems`), so they are shown again.
public protocol DiffableSnapshot {
    associatedtype SectionIdentifierType: Hashable
    associatedtype ItemIdentifierType: Hashable
    init()
    mutating func appendSections(_ identifiers: [SectionIdentifierType])
    mutating func appendItems(_ identifiers: [ItemIdentifierType], toSection sectionIdentifier: SectionIdentifierType?)
    mutating func reloadItems(_ identifiers: [ItemIdentifierType])
    mutating func reconfigureItems(_ identifiers: [ItemIdentifierType])
    mutating func reloadSections(_ identifiers: [SectionIdentifierType])
}

/// Why a list cannot be a diffable data source's snapshot.
public struct SnapshotRefusal: Error, CustomStringConvertible, Sendable {
    /// What is wrong, and what to do instead.
    public let description: String
}

extension LiveList {
    /// A flat list as a diffable data source's snapshot: one section, each item by `id`, and the
    /// rows `change` changed in place (the delta's reloads) marked by `refresh`.
    ///
    /// After a `.reset`, apply it with `applySnapshotUsingReloadData` (iOS 15): a reset says
    /// nothing of which rows changed. Throws where an id repeats (a session with
    /// `unique: false`), which a diffable data source refuses by stopping the app.
    public func snapshot<Snapshot: DiffableSnapshot>(
        section: Snapshot.SectionIdentifierType, id: (Item) -> Snapshot.ItemIdentifierType, after change: Change? = nil,
        refresh: RowRefresh = .reconfigure
    ) throws -> Snapshot {
        guard !isSectioned else { throw SnapshotRefusal(description: "the session is sectioned: use snapshot(id:after:refresh:)") }
        let ids = try Self.unique(items.map(id))
        var snapshot = Snapshot()
        snapshot.appendSections([section])
        snapshot.appendItems(ids, toSection: section)
        // A change the list took holds a delta (an answer without one is read afresh: a reset).
        guard case .delta(let answer, _, _) = change, let delta = answer.delta else { return snapshot }
        Self.mark(delta.reloads.map { ids[$0.target] }, in: &snapshot, refresh)
        return snapshot
    }

    /// A sectioned list as a diffable data source's snapshot: its sections by their ids, each
    /// item by `id`, and what `change` changed in place marked: rows by `refresh`, sections
    /// whose own fields changed by `reloadSections`. Throws where an id repeats.
    public func snapshot<Snapshot: DiffableSnapshot>(
        id: (Item) -> Snapshot.ItemIdentifierType, after change: Change? = nil, refresh: RowRefresh = .reconfigure
    ) throws -> Snapshot where Snapshot.SectionIdentifierType == JSONValue {
        guard isSectioned || items.isEmpty else { throw SnapshotRefusal(description: "the session is flat: use snapshot(section:id:after:refresh:)") }
        let sectionIDs = try Self.unique(sections.map(\.id))
        let ids = sections.map { $0.items.map(id) }
        _ = try Self.unique(ids.flatMap { $0 })
        var snapshot = Snapshot()
        snapshot.appendSections(sectionIDs)
        for (section, rows) in zip(sectionIDs, ids) { snapshot.appendItems(rows, toSection: section) }
        guard case .delta(let answer, _, _) = change, let sectionDelta = answer.sectionDelta, let itemDelta = answer.itemDelta else {
            return snapshot
        }
        // A row of a section reloaded whole is shown again with it.
        let reloaded = Set(sectionDelta.reloads.map(\.target))
        Self.mark(itemDelta.reloads.map(\.target).filter { !reloaded.contains($0.section) }.map { ids[$0.section][$0.item] }, in: &snapshot, refresh)
        if !reloaded.isEmpty { snapshot.reloadSections(reloaded.sorted().map { sectionIDs[$0] }) }
        return snapshot
    }

    private static func unique<ID: Hashable>(_ ids: [ID]) throws -> [ID] {
        var seen = Set<ID>(minimumCapacity: ids.count)
        for id in ids where !seen.insert(id).inserted {
            throw SnapshotRefusal(description: "the id \(id) repeats: a diffable data source needs unique identifiers")
        }
        return ids
    }

    private static func mark<Snapshot: DiffableSnapshot>(_ ids: [Snapshot.ItemIdentifierType], in snapshot: inout Snapshot, _ refresh: RowRefresh) {
        guard !ids.isEmpty else { return }
        switch refresh {
        case .reload: snapshot.reloadItems(ids)
        case .reconfigure: snapshot.reconfigureItems(ids)
        }
    }
}
