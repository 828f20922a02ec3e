import ByteJSON
import LiveCollections

/// Windowed subscribers: each is given the deltas of its rows alone, projected from each
/// step's delta (see `WindowProjection`), and where a step changes nothing in its rows, the
/// new total at most once a second.
extension LiveFeed {
    /// What starts a windowed subscriber at `now`: one delta from the rows its token says it
    /// holds (a reconnection, a scroll to another window) where the feed still holds the state
    /// they were read from, or traces them to now (`LiveTrace`), else the window's rows whole. Sets its place (`placed`, where the
    /// caller placed it in `now` already).
    static func startWindow(
        _ subscriber: LiveSubscriber, _ request: WindowRequest, placed: PlacedWindow?, from token: WindowToken?, now: SessionSnapshot,
        read: SessionSnapshot, log: [LiveEntry], trace: LiveTrace
    ) -> [LiveEvent] {
        let window =
            placed ?? (try? PlacedWindow.place(request, in: now.collection, options: now.options))
            ?? PlacedWindow.replace(request, anchorID: nil, in: now.collection, options: now.options)
        let position = LivePosition(incarnation: now.incarnation, version: now.version)
        subscriber.position = position
        subscriber.placed = WindowState(
            window: window, told: now.version, toldRows: window.rows, lastTotal: monotonicNow(), anchorID: window.anchorID(in: now.collection))
        guard let token, let rows = token.rows, token.position.incarnation == now.incarnation, token.position.version <= now.version else {
            return [WindowEvents.reset(now, window)]
        }
        let then: SessionSnapshot? =
            token.position == position
            ? now
            : token.position.version == read.version ? read : log.last { $0.position == token.position }?.state
        guard let then else {
            // Its state trimmed from the history: its rows, traced to now.
            guard let (held, owners) = trace.rows(rows, at: token.position, log: log, now: now) else { return [WindowEvents.reset(now, window)] }
            let event = WindowEvents.catchUp(
                from: .flat(held), baseVersion: token.position.version, owners: owners, to: window, in: now, spelling: subscriber.spelling)
            return [event ?? WindowEvents.reset(now, window)]
        }
        guard rows.upperBound <= then.collection.placeCount else { return [WindowEvents.reset(now, window)] }
        if token.position == position && rows == window.rows { return [] }
        let held: WindowEvents.Held =
            switch then.collection.shape {
            case .flat(let items): .flat(Array(items[rows]))
            case .sectioned(let sections): .sectioned(Array(sections[rows]))
            }
        let event = WindowEvents.catchUp(
            from: held, baseVersion: then.version, owners: then.collection.owners, to: window, in: now, spelling: subscriber.spelling)
        return [event ?? WindowEvents.reset(now, window)]
    }

    /// What a fan-out pass works out once for all the windows it moves: each new step's motion
    /// and the rows (or sections) the session has after it.
    struct PassSteps {
        private struct Step {
            let sequence: UInt64
            let motion: (any WindowMotion)?
            /// Where a flat step's changes lie: it passes most windows by.
            let span: ChangeSpan?
            let count: Int
        }

        /// A pass meets a step or two (the windows behind are one step behind, the same).
        private var known: [Step] = []

        /// `window` moved along `entry` where the step changes none of its rows; nil where it
        /// does, or is not a change a window can follow by its delta.
        mutating func quietly(_ window: PlacedWindow, along entry: LiveEntry) -> PlacedWindow? {
            let at = step(entry)
            if let span = known[at].span, let next = Self.plainlyPassed(window, span, newCount: known[at].count) { return next }
            guard let motion = known[at].motion else { return nil }
            let next = window.advanced(by: motion, oldCount: window.total, newCount: known[at].count)
            guard motion.isUnchanged(old: window.rows, new: next.rows), !LiveFeed.reanchored(window, next, motion) else { return nil }
            return next
        }

        /// Where `entry`'s step is in `known`, added where it is not.
        private mutating func step(_ entry: LiveEntry) -> Int {
            if let found = known.lastIndex(where: { $0.sequence == entry.sequence }) { return found }
            let flat = entry.projection
            known.append(
                Step(
                    sequence: entry.sequence, motion: flat ?? entry.sectionProjection, span: flat?.span,
                    count: entry.state?.collection.placeCount ?? 0))
            return known.count - 1
        }

        /// `entry` as a step that windows one step behind it (given everything up to sequence
        /// `previous`) pass by its span alone, where it is a flat change; nil where it is not.
        mutating func quick(_ entry: LiveEntry, after previous: UInt64) -> QuickStep? {
            guard let baseVersion = entry.baseVersion else { return nil }
            // Known by `quietly` too: a window the quick walk leaves to it costs no second
            // projection.
            let at = step(entry)
            guard let span = known[at].span else { return nil }
            return QuickStep(
                previous: previous, incarnation: entry.position.incarnation, baseVersion: baseVersion, version: entry.position.version,
                span: span, count: known[at].count)
        }

        /// `window` moved along a flat step whose changes' span plainly misses its rows and its
        /// anchor; nil says nothing.
        @inline(__always)
        fileprivate static func plainlyPassed(_ window: PlacedWindow, _ span: ChangeSpan, newCount: Int) -> PlacedWindow? {
            let shift = newCount - window.total
            var anchor = 0
            if window.shape.isKeyset {
                guard window.anchor >= 0, window.anchor < window.total, let moved = span.newPosition(ofOld: window.anchor, shift: shift)
                else { return nil }
                anchor = moved
            }
            let next = PlacedWindow(window.shape, anchor: anchor, total: newCount)
            return span.isUnchanged(old: window.rows, new: next.rows, shift: shift) ? next : nil
        }
    }

    /// A pass's one new step, a flat change, as the quick walk (`passQuickly`) reads it.
    struct QuickStep {
        /// The sequence of the log's entry before it: a window given everything up to it has
        /// this step alone to pass.
        let previous: UInt64
        let incarnation: String
        let baseVersion: UInt64
        let version: UInt64
        let span: ChangeSpan
        let count: Int
    }

    /// The first walk of a pass over every window's slot: moves each window that has only
    /// `quick` to pass and that the step plainly passes by, as `passQuietly` would, and
    /// puts the slots left for the full path (`passQuietly`, then `deliverWindow`) in `slow`, in
    /// order.
    /// A commit outside thousands of windows is a walk of all their slots, read cold (the
    /// commit's copy of a long list has just pushed them out of the caches). Through
    /// `passQuietly` each slot cost a slice of the log, retains and calls; here a slot is a few
    /// loads and comparisons in one loop, which the processor runs ahead of the slot it waits on
    /// (about half the fan-out CPU of a commit outside 9,725 windows, docs/performance.md).
    static func passQuickly(
        _ slots: UnsafeMutableBufferPointer<WindowSlots.Slot>, _ quick: QuickStep?, latest: UInt64, now: Int64, into slow: inout [Int]
    ) {
        for at in slots.indices {
            let delivered = slots[at].delivered
            if delivered >= latest {
                // Up to date: a pass for its pending total alone.
                if now >= slots[at].totalDue { slow.append(at) }
                continue
            }
            guard let quick, delivered == quick.previous, slots[at].version == quick.baseVersion, now < slots[at].totalDue,
                slots[at].incarnation == quick.incarnation,
                let next = PassSteps.plainlyPassed(slots[at].window, quick.span, newCount: quick.count),
                Self.moveQuietly(&slots[at], to: next, version: quick.version, now: now)
            else {
                slow.append(at)
                continue
            }
            slots[at].delivered = latest
        }
    }

    /// Moves a window along `entries` where each follows its place and changes nothing in its
    /// rows, and no total is due: only its place and total change, and nothing is sent, so its
    /// subscriber is not even visited (most windows a commit reaches, such as one far below
    /// it). False, with nothing changed, where it needs `deliverWindow`. Runs under the feed's
    /// lock; what it does matches `deliverWindow`'s path for unchanged windows.
    static func passQuietly(_ slot: inout WindowSlots.Slot, _ entries: ArraySlice<LiveEntry>, steps: inout PassSteps, now: Int64) -> Bool {
        guard now < slot.totalDue else { return false }
        var window = slot.window
        var version = slot.version
        var moved = false
        for entry in entries {
            let sameLife = entry.position.incarnation == slot.incarnation
            if sameLife, entry.position.version <= version { continue }
            guard sameLife, entry.baseVersion == version, let next = steps.quietly(window, along: entry) else { return false }
            window = next
            version = entry.position.version
            moved = true
        }
        guard moved else { return true }
        return moveQuietly(&slot, to: window, version: version, now: now)
    }

    /// Moves a slot's window to `window` at `version` without a word, a total pending from
    /// now where none is; false, with nothing changed, where that total would be due already
    /// (the full pass sends it).
    @inline(__always)
    private static func moveQuietly(_ slot: inout WindowSlots.Slot, to window: PlacedWindow, version: UInt64, now: Int64) -> Bool {
        if slot.pendingSince == nil {
            guard now < WindowState.totalDue(pendingSince: now, lastTotal: slot.lastTotal) else { return false }
            slot.pendingSince = now
        }
        slot.window = window
        slot.version = version
        slot.ahead = true
        return true
    }

    /// Sends a windowed subscriber the steps after its place, through its window; false where
    /// it is gone or done.
    func deliverWindow(_ entries: ArraySlice<LiveEntry>, to subscriber: LiveSubscriber) -> Bool {
        guard let request = subscriber.window else { return false }
        var (position, placed) = underLock { (subscriber.position, subscriber.placed) }
        guard var place = placed else { return false }
        var events: [LiveEvent] = []
        // The entry last followed, not its state: a copy of a state counts some ten references,
        // shared by every window a fan-out's threads move at once.
        var current: LiveEntry?
        for entry in entries {
            if let position, entry.position.incarnation == position.incarnation, entry.position.version <= position.version { continue }
            if let end = entry.end() {
                guard entry.position.incarnation == position?.incarnation else { continue }
                subscriber.sink.finish(with: events + [end])
                return false
            }
            guard let count = entry.placeCount else { continue }
            let version = entry.position.version
            let follows = position.map { entry.position.incarnation == $0.incarnation && entry.baseVersion == $0.version } ?? false
            if follows, let projection = entry.motion {
                let next = place.window.advanced(by: projection, oldCount: place.window.total, newCount: count)
                if Self.reanchored(place.window, next, projection), let after = entry.state {
                    place.anchorID = next.anchorID(in: after.collection)
                }
                if projection.isUnchanged(old: place.window.rows, new: next.rows) {
                    place.pendingSince = place.pendingSince ?? monotonicNow()
                    place.window = next
                } else if let event = entry.windowDelta(
                    from: place.window.rows, to: next, baseVersion: place.told, spelling: subscriber.spelling)
                {
                    events.append(event)
                    place = WindowState(window: next, told: version, toldRows: next.rows, lastTotal: place.lastTotal, anchorID: place.anchorID)
                }
            } else if let after = entry.state {
                // A gap, or a new life (flat or sectioned, whichever the session is now): the
                // window's rows, whole.
                let window = PlacedWindow.replace(request, anchorID: place.anchorID, in: after.collection, options: after.options)
                if let reset = entry.windowReset(window) {
                    events = [reset]
                    place = WindowState(
                        window: window, told: after.version, toldRows: window.rows, lastTotal: place.lastTotal,
                        anchorID: window.anchorID(in: after.collection))
                }
            }
            position = entry.position
            current = entry
        }
        let now = monotonicNow()
        if place.isDue(now), let position {
            if let state = current?.state ?? self.state(at: position), let total = Self.total(place, in: state, spelling: subscriber.spelling) {
                events.append(total)
                place = WindowState(window: place.window, told: state.version, toldRows: place.window.rows, lastTotal: now, anchorID: place.anchorID)
            }
        }
        settle(subscriber, at: position, place)
        // The token the subscriber resumes from is its last event's: each event above sets
        // `place` to what it tells. Most windows a commit reaches are told nothing, and the
        // others' tokens are not spelled twice (a fan-out spells thousands a commit).
        let token = events.last?.id
        assert(events.isEmpty || token == LiveSubscriber.token(at: position, place))
        return subscriber.sink.send(events, reaching: token)
    }

    /// Whether a keyset window's anchor item changed (its own was deleted).
    fileprivate static func reanchored(_ before: PlacedWindow, _ after: PlacedWindow, _ projection: any WindowMotion) -> Bool {
        guard before.shape.isKeyset else { return false }
        guard before.anchor >= 0, before.anchor < before.total else { return after.anchor >= 0 && after.anchor < after.total }
        return projection.newPosition(ofOld: before.anchor) == nil
    }

    /// A `window` event: from the version the subscriber was last told to `state` its rows are
    /// the same, and this says where they are now and how many rows the session has.
    private static func total(_ place: WindowState, in state: SessionSnapshot, spelling: LiveSpelling) -> LiveEvent? {
        var writer = JSONWriter(capacity: 160)
        writer.raw("{")
        writer.member("id", first: true)
        writer.string(String(SessionNamespace.shown(state.id)))
        writer.member("version")
        writer.unsigned(UInt(state.version))
        writer.member("baseVersion")
        writer.unsigned(UInt(place.told))
        writer.windowMember(place.window, in: state.collection)
        writer.raw("}")
        return LiveEvent(name: .window, id: state.windowToken(place.window).token, data: writer.bytes)
    }
}
