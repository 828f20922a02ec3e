import LiveCollections

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// What one step keeps for windowed subscribers: its delta's projection, made once for all of
/// them, and the events it sent, shared by subscribers with the same window (every offset
/// window at one offset, say), up to a bound: thousands of distinct windows each get their
/// own event, which is not kept.
final class WindowCache: Sendable {
    struct Key: Hashable {
        var spelling: LiveSpelling
        var old: Range<Int>
        var new: PlacedWindow
        var baseVersion: UInt64
    }

    fileprivate let projection = NIOLockedValueBox<WindowProjection??>(nil)
    fileprivate let sectionProjection = NIOLockedValueBox<SectionedWindowProjection??>(nil)
    /// Either projection, boxed once: a projection is too large for an existential's inline
    /// room, so each `motion` made afresh was a heap box and seven counted references, for
    /// every window a fan-out moves.
    fileprivate let motion = NIOLockedValueBox<(any WindowMotion)??>(nil)
    fileprivate let events = NIOLockedValueBox<[Key: LiveEvent]>([:])
    fileprivate let resets = NIOLockedValueBox<[PlacedWindow: LiveEvent]>([:])
    static let kept = 64
}

/// What a change's window deltas read: the lists before and after it, the documents their
/// items point into, and what its options say of deleted items.
struct WindowRows: Sendable {
    enum Lists: Sendable {
        case flat(before: [JSONItem], after: [JSONItem])
        /// With the items the change deleted.
        case sectioned(before: [JSONSection], after: [JSONSection], deletedItems: [JSONItem])
    }

    let lists: Lists
    let owners: DocumentOwners
    let includeDeletedItems: Bool

    init(_ change: SessionChange) {
        switch change.outcome {
        case .flat(_, let before, let after): lists = .flat(before: before, after: after)
        case .sectioned(let update, let before, let after): lists = .sectioned(before: before, after: after, deletedItems: update.deletedItems)
        }
        owners = change.owners
        includeDeletedItems = change.options.includeDeletedItems
    }
}

extension LiveEntry {
    /// The change's exact flat delta, projected: nil for a step that is not a flat change, or
    /// whose delta was not worked out (a whole update over the data-count threshold).
    var projection: WindowProjection? {
        windows.projection.withLockedValue { kept in
            if let kept { return kept }
            var made: WindowProjection?
            if case .change(let change) = kind, case .flat(let update, _, _) = change.outcome, let delta = update.exactDelta {
                made = WindowProjection(delta)
            }
            kept = .some(made)
            return made
        }
    }

    /// The change's exact sectioned delta, projected: nil for a step that is not a sectioned
    /// change with both stages worked out.
    var sectionProjection: SectionedWindowProjection? {
        windows.sectionProjection.withLockedValue { kept in
            if let kept { return kept }
            var made: SectionedWindowProjection?
            if case .change(let change) = kind, case .sectioned(let update, _, _) = change.outcome, let delta = update.exact {
                made = SectionedWindowProjection(delta)
            }
            kept = .some(made)
            return made
        }
    }

    /// How the step moves windows: its flat or its sectioned projection.
    var motion: (any WindowMotion)? {
        if let kept = windows.motion.withLockedValue({ $0 }) { return kept }
        let made: (any WindowMotion)? = projection ?? sectionProjection
        windows.motion.withLockedValue { $0 = .some(made) }
        return made
    }

    /// A window's reset to the state after this step.
    func windowReset(_ window: PlacedWindow) -> LiveEvent? {
        guard let state else { return nil }
        if let event = windows.resets.withLockedValue({ $0[window] }) { return event }
        let event = WindowEvents.reset(state, window)
        windows.resets.withLockedValue { if $0.count < WindowCache.kept { $0[window] = event } }
        return event
    }

    /// The delta of this change seen through a window: from the rows `old` held (at
    /// `baseVersion`, which this change follows or leaves unchanged since) to `new`'s.
    func windowDelta(from old: Range<Int>, to new: PlacedWindow, baseVersion: UInt64, spelling: LiveSpelling) -> LiveEvent? {
        guard let rows = windowRows, let after = state else { return windowReset(new) }
        let key = WindowCache.Key(spelling: spelling, old: old, new: new, baseVersion: baseVersion)
        // Full (thousands of distinct windows), the cache takes no more: one lock, not two.
        let (kept, full) = windows.events.withLockedValue { ($0[key], $0.count >= WindowCache.kept) }
        if let kept { return kept }
        let step: WindowEvents.Step
        var deleted: [JSONItem] = []
        switch rows.lists {
        case .flat(let before, let items):
            guard let projection else { return windowReset(new) }
            step = .flat(projection.projected(old: old, new: new.rows), old: ItemRows(before, old), new: ItemRows(items, new.rows))
            if rows.includeDeletedItems { deleted = old.filter { projection.newPosition(ofOld: $0) == nil }.map { before[$0] } }
        case .sectioned(let before, let sections, let deletedItems):
            guard let projection = sectionProjection else { return windowReset(new) }
            let held = Array(before[old])
            step = .sectioned(projection.projected(old: old, new: new.rows), old: held, new: Array(sections[new.rows]))
            if rows.includeDeletedItems, !deletedItems.isEmpty {
                let finder = HashFinder(deletedItems)
                deleted = held.flatMap(\.items).filter { finder.find($0) != nil }
            }
        }
        guard
            let event = WindowEvents.delta(
                step, deleted: deleted, baseVersion: baseVersion, to: new, in: after, owners: rows.owners, spelling: spelling)
        else {
            return windowReset(new)
        }
        if !full { windows.events.withLockedValue { if $0.count < WindowCache.kept { $0[key] = event } } }
        return event
    }
}
