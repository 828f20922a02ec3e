import LiveCollections

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// One step of a session as its feed keeps it: a committed change, a new life (created or
/// replaced), or the end. A change and a new life keep the session as it is after them, so
/// that a subscriber can start from any kept step, or catch up from one in a single delta.
///
/// Each event is rendered once per spelling and kept, however many subscribers it goes to.
final class LiveEntry: Sendable {
    enum Kind: Sendable {
        case change(SessionChange)
        /// The whole session: a new life, a step that cannot be chained, or what a first
        /// subscriber read.
        case state(SessionSnapshot)
        case end(SessionEnd)
    }

    let kind: Kind
    /// The session after this step; nil for an end.
    let state: SessionSnapshot?
    /// How many rows (items, or sections) the session has after this step; nil for an end.
    let placeCount: Int?
    /// The version a change started from; nil for the others.
    let baseVersion: UInt64?
    private let endReason: SessionEnd?
    /// What a change's window deltas read (see LiveEntry+Window.swift); nil for the others.
    let windowRows: WindowRows?
    let position: LivePosition
    /// The order in which the feed took it.
    let sequence: UInt64
    /// What the feed counts for it against its history limit.
    let bytes: Int
    private let rendered = NIOLockedValueBox<[LiveSpelling: LiveEvent]>([:])
    private let resetEvent = NIOLockedValueBox<LiveEvent?>(nil)
    /// What windowed subscribers are sent for this step (see LiveEntry+Window.swift).
    let windows = WindowCache()

    private init(_ kind: Kind, at position: LivePosition, sequence: UInt64, bytes: Int) {
        self.kind = kind
        // Taken apart once: a fan-out asks each of these for thousands of windows a commit,
        // and matching `kind` copies the change (some twenty references counted, on every
        // fan-out thread at once) each time.
        switch kind {
        case .change(let change):
            state = change.after
            baseVersion = change.baseVersion
            endReason = nil
            windowRows = WindowRows(change)
        case .state(let snapshot):
            state = snapshot
            (baseVersion, endReason, windowRows) = (nil, nil, nil)
        case .end(let reason):
            (state, baseVersion, endReason, windowRows) = (nil, nil, reason, nil)
        }
        placeCount = state?.collection.placeCount
        self.position = position
        self.sequence = sequence
        self.bytes = bytes
    }

    convenience init(change: SessionChange, sequence: UInt64) {
        self.init(
            .change(change), at: LivePosition(incarnation: change.incarnation, version: change.version), sequence: sequence,
            bytes: SessionFootprint.of(change.after.collection))
    }

    convenience init(state snapshot: SessionSnapshot, sequence: UInt64) {
        self.init(
            .state(snapshot), at: LivePosition(incarnation: snapshot.incarnation, version: snapshot.version),
            sequence: sequence, bytes: SessionFootprint.of(snapshot.collection))
    }

    convenience init(end reason: SessionEnd, at position: LivePosition, sequence: UInt64) {
        self.init(.end(reason), at: position, sequence: sequence, bytes: 64)
    }

    var isEnd: Bool { endReason != nil }

    /// The change's delta event in `spelling` (a change only).
    func delta(_ spelling: LiveSpelling) -> LiveEvent? {
        guard case .change(let change) = kind else { return nil }
        // A version committed without a delta (over the animation thresholds) carries nothing a
        // subscriber could apply, and a format without the collection not even the list: it
        // goes as the reset to that version, so that no client shows it on the old list.
        guard change.hasDelta else { return reset() }
        if let event = rendered.withLockedValue({ $0[spelling] }) { return event }
        // A delta that cannot be spelled (an internal failure, as a request would answer 500)
        // becomes a reset: the subscriber starts again from the session's state.
        guard let data = try? change.json(spelling: spelling.applied(to: change.options), carrying: spelling.carried)
        else { return reset() }
        let event = LiveEvent(name: .delta, id: position.token, data: data)
        rendered.withLockedValue { $0[spelling] = event }
        return event
    }

    /// The reset event that starts a subscriber here (not an end).
    func reset() -> LiveEvent? {
        if let event = resetEvent.withLockedValue({ $0 }) { return event }
        guard let state else { return nil }
        let event = LiveEvent(name: .reset, id: position.token, data: state.json)
        resetEvent.withLockedValue { $0 = event }
        return event
    }

    func end() -> LiveEvent? {
        guard let reason = endReason else { return nil }
        // No id: there is nothing to resume after an end.
        return .end(reason, id: nil)
    }
}

extension SessionChange {
    /// Whether the change was answered with a delta (every stage of it, for sections).
    var hasDelta: Bool {
        switch outcome {
        case .flat(let update, _, _): update.delta != nil
        case .sectioned(let update, _, _): update.sectionDelta != nil && update.itemDelta != nil
        }
    }
}
