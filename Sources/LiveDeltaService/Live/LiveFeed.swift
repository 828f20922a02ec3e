import Dispatch
import LiveCollections
import MicroHTTP
import Synchronization

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// One session's live feed: the steps it keeps (its history, bounded in versions and bytes)
/// and its subscribers.
///
/// Steps arrive from the store in the session's order (`publish`); each subscriber is given
/// every step after its place, once, in order: a change that follows its place as its delta,
/// anything else (a step it cannot chain, a new life) as a reset to the state after it. So a
/// subscriber never skips a version silently. Fan-out runs on a Dispatch queue, one pass at a
/// time per feed, never on the thread that committed; an event is rendered once per spelling.
final class LiveFeed: Sendable {
    struct Limits: Sendable {
        var subscribers: Int
        var versions: Int
        var bytes: Int
    }

    let id: String
    private let limits: Limits
    private let fanOut: ThreadPool
    /// Told how many subscribers left, whenever some do (the hub counts them all).
    private let onLeave: @Sendable (Int) -> Void

    private struct State {
        var log: [LiveEntry] = []
        var logBytes = 0
        /// What is left of the steps trimmed from `log`, for windows (`LiveTrace`).
        var trace = LiveTrace()
        var nextSequence: UInt64 = 1
        var subscribers: [ObjectIdentifier: LiveSubscriber] = [:]
        /// Of those, the ones following the whole session, and the places of the windowed.
        var whole: [ObjectIdentifier: LiveSubscriber] = [:]
        var windows = WindowSlots()
        /// A fan-out pass is running or queued.
        var draining = false
        /// The last pass's lists, empty, kept for the next (one pass runs at a time): made anew
        /// for each pass, a list for thousands of windows (400 KB) grew through fresh memory
        /// that glibc gave back between passes, and the kernel zeroed it again each time (with
        /// `glibc.malloc.hugetlb=1`, 2 MB at a time). Each holds at most one entry a subscriber.
        var passWork: [(LiveSubscriber, ArraySlice<LiveEntry>)] = []
        var passSlow: [Int] = []
        /// When a tick last started a pass for windows' totals (monotonic nanoseconds).
        var totalsPass: Int64 = 0
        /// The hub let go of this feed: whoever still holds it must get a new one.
        var removed = false
        /// When the last subscriber left (monotonic nanoseconds); nil while there are some.
        var idleSince: Int64? = monotonicNow()
    }
    private let state = NIOLockedValueBox(State())

    init(id: String, limits: Limits, fanOut: ThreadPool, onLeave: @escaping @Sendable (Int) -> Void) {
        self.id = id
        self.limits = limits
        self.fanOut = fanOut
        self.onLeave = onLeave
    }

    // MARK: - Steps in

    /// A committed change.
    func publish(_ change: SessionChange) {
        append { sequence, _ in LiveEntry(change: change, sequence: sequence) }
    }

    /// The whole session: a new life.
    /// the feed takes only where it knows nothing newer.
    func publish(_ snapshot: SessionSnapshot) {
        append { sequence, _ in LiveEntry(state: snapshot, sequence: sequence) }
    }

    /// A step read back from shared storage: the session after it. Where the feed holds the
    /// session at `baseVersion` of the same life, the change is worked out from that by the
    /// same rules the writer's replica used (so it is the delta the writer was answered);
    /// otherwise the step is taken whole, and subscribers are reset to it.
    func publish(stored snapshot: SessionSnapshot, appended: Bool, baseVersion: UInt64?) {
        append { sequence, latest in
            // A step the feed has already (the writer's replica took it as it committed): not
            // worked out again only to be passed over.
            if let latest, latest.position.incarnation == snapshot.incarnation, latest.position.version >= snapshot.version { return nil }
            if let baseVersion, let latest, let before = latest.state, !latest.isEnd,
                latest.position == LivePosition(incarnation: snapshot.incarnation, version: baseVersion),
                let change = Self.change(from: before, to: snapshot, appended: appended)
            {
                return LiveEntry(change: change, sequence: sequence)
            }
            return LiveEntry(state: snapshot, sequence: sequence)
        }
    }

    /// What seeds an empty feed: the logged state at a subscriber's version, then each step up
    /// to the read as the change the session's rules make (the delta the writer was answered),
    /// where they chain without a gap up to `read`; else nil, and `read` alone seeds it.
    private static func seed(from logged: [LoggedState], upTo read: SessionSnapshot) -> (start: SessionSnapshot, changes: [SessionChange])? {
        // The log was read after the session: steps past the read come to the feed as usual.
        let logged = logged.filter { $0.snapshot.version <= read.version }
        guard let first = logged.first, let last = logged.last, last.snapshot.incarnation == read.incarnation,
            last.snapshot.version == read.version
        else { return nil }
        var changes: [SessionChange] = []
        var before = first.snapshot
        for step in logged.dropFirst() {
            guard step.baseVersion == before.version, step.snapshot.version == before.version + 1,
                let change = change(from: before, to: step.snapshot, appended: step.appended)
            else { return nil }
            changes.append(change)
            before = step.snapshot
        }
        return (first.snapshot, changes)
    }

    /// Whether the feed holds nothing yet (new on this replica).
    var isEmpty: Bool { state.withLockedValue { $0.log.isEmpty } }

    /// The change from one state to the next, as the session's rules make it.
    private static func change(from before: SessionSnapshot, to after: SessionSnapshot, appended: Bool) -> SessionChange? {
        guard let holder = try? SessionRules.holder(for: before.collection, options: before.options, version: before.version) else { return nil }
        let session = OpenSession(
            id: before.id, incarnation: before.incarnation, options: before.options, holder: holder, owners: before.collection.owners, now: 0)
        session.step.lock()
        defer { session.step.unlock() }
        if appended {
            let added: JSONCollection
            switch (before.collection.shape, after.collection.shape) {
            case (.flat(let old), .flat(let new)) where new.count >= old.count:
                added = .flat(Array(new[old.count...]), owners: after.collection.owners)
            case (.sectioned(let old), .sectioned(let new)) where new.count >= old.count:
                added = .sectioned(Array(new[old.count...]), owners: after.collection.owners)
            default: return nil
            }
            return try? SessionRules.append(session, added, condition: .any, maxItems: .max)
        }
        if case .flat(let data) = holder, case .flat(let old) = before.collection.shape, case .flat(let new) = after.collection.shape,
            max(old.count, new.count) > data.policy.dataCountAnimationThreshold, let delta = Self.delta(from: old, to: new)
        {
            // Over the data-count threshold the delta only windows use is worked out here,
            // from the rows between those both versions share at the top and the bottom: the
            // rules' own would match all the ids of a million rows for a change of a few.
            let animated = data.policy.animated(delta, oldCount: old.count, newCount: new.count)
            return try? SessionRules.commit(session, .flat(new, owners: before.collection.owners.merging(after.collection.owners), delta: animated))
        }
        return try? SessionRules.update(session, to: after.collection, condition: .any, commit: true, created: false)
    }

    /// The exact delta between two states of a flat session, diffing only what lies between
    /// the rows they share at the top and at the bottom: a step read back from storage of a
    /// million rows that changed a few is a comparison of the rest, not a diff of a million.
    /// Nil where the ids repeat or an id is twice in one state.
    static func delta(from old: [JSONItem], to new: [JSONItem]) -> IndexDelta? {
        let shorter = min(old.count, new.count)
        var top = 0
        while top < shorter, old[top].uniqueID == new[top].uniqueID, old[top] == new[top] { top += 1 }
        var bottom = 0
        while bottom < shorter - top, old[old.count - 1 - bottom].uniqueID == new[new.count - 1 - bottom].uniqueID,
            old[old.count - 1 - bottom] == new[new.count - 1 - bottom]
        {
            bottom += 1
        }
        guard let inner = try? IndexDelta(from: Array(old[top..<old.count - bottom]), to: Array(new[top..<new.count - bottom])) else {
            return nil
        }
        func shifted(_ pairs: [IndexPair]) -> [IndexPair] { pairs.map { IndexPair(source: $0.source + top, target: $0.target + top) } }
        return IndexDelta(
            deletions: inner.deletions.map { $0 + top }, insertions: inner.insertions.map { $0 + top }, moves: shifted(inner.moves),
            reloads: shifted(inner.reloads))
    }

    /// A change committed on this replica of a shared store, taken only where it follows the
    /// latest step the feed holds (else the steps read back from storage bring it, in order).
    func publishChained(_ change: SessionChange) {
        append { sequence, latest in
            guard let latest, !latest.isEnd, latest.position == LivePosition(incarnation: change.incarnation, version: change.baseVersion)
            else { return nil }
            return LiveEntry(change: change, sequence: sequence)
        }
    }

    func publishEnd(_ reason: SessionEnd, incarnation: String) {
        append { sequence, _ in LiveEntry(end: reason, at: LivePosition(incarnation: incarnation, version: .max), sequence: sequence) }
    }

    /// Sends `event`, no step, to the subscribers there are now, beside the steps.
    func notice(_ event: LiveEvent) {
        for subscriber in state.withLockedValue({ Array($0.subscribers.values) }) { subscriber.sink.notice(event) }
    }

    /// Takes the entry `make` makes (given its sequence number and the latest entry; nil for
    /// none) where it follows what the feed holds, and wakes the fan-out.
    private func append(_ make: (UInt64, LiveEntry?) -> LiveEntry?) {
        let wake = state.withLockedValue { state -> Bool in
            guard let entry = make(state.nextSequence, state.log.last), Self.takes(entry, after: state.log.last) else { return false }
            state.nextSequence += 1
            state.log.append(entry)
            state.logBytes += entry.bytes
            trim(&state)
            guard !state.subscribers.isEmpty, !state.draining else { return false }
            state.draining = true
            return true
        }
        // A pool that takes no more (the hub stopping) leaves the feed ready to ask again.
        if wake, !fanOut.run({ self.drain() }) { state.withLockedValue { $0.draining = false } }
    }

    /// Whether a step follows what the feed holds: a later version of the same life, a new
    /// life, or the end of this one.
    private static func takes(_ entry: LiveEntry, after latest: LiveEntry?) -> Bool {
        guard let latest else { return true }
        let sameLife = entry.position.incarnation == latest.position.incarnation
        switch entry.kind {
        case .end: return sameLife && !latest.isEnd
        case .state, .change: return !sameLife || (!latest.isEnd && entry.position.version > latest.position.version)
        }
    }

    /// Drops the oldest steps past the limits, always keeping the latest (the state now).
    private func trim(_ state: inout State) {
        var drop = 0
        while state.log.count - drop > 1 && (state.log.count - drop > limits.versions || state.logBytes > limits.bytes) {
            state.logBytes -= state.log[drop].bytes
            state.trace.take(state.log[drop], limits: limits)
            drop += 1
        }
        if drop > 0 { state.log.removeFirst(drop) }
    }

    // MARK: - Subscribers

    enum Joined {
        /// Joined; `seeded` where the join started the feed from its read.
        case joined(seeded: Bool)
        case full
        /// The hub let go of this feed meanwhile: join a new one.
        case removed
    }

    /// Adds a subscriber, sending what brings it from `token` (nil: nowhere) to now: nothing
    /// where it is there, the missed deltas where the history holds them all, one delta from
    /// its version where `coalesce` and the history holds that version's state, else a reset.
    ///
    /// `read` is the session as the store gave it just now. An empty feed starts from it. A
    /// shared store's feed learns of steps a little after they commit, so `read` may be newer
    /// than the feed: the subscriber then starts from `read` alone, and the feed's steps up to
    /// it are passed over for it, while the other subscribers go on undisturbed.
    func join(
        _ subscriber: LiveSubscriber, from given: WindowToken?, coalesce: Bool, read: SessionSnapshot, readWindow: PlacedWindow? = nil,
        logged: [LoggedState] = []
    ) -> Joined {
        let token = given?.position
        let joined = state.withLockedValue { state -> Joined in
            guard !state.removed else { return .removed }
            guard state.subscribers.count < limits.subscribers else { return .full }
            let seeded = state.log.isEmpty
            if seeded {
                let seed = Self.seed(from: logged, upTo: read)
                var entries = [LiveEntry(state: seed?.start ?? read, sequence: state.nextSequence)]
                state.nextSequence += 1
                for change in seed?.changes ?? [] {
                    entries.append(LiveEntry(change: change, sequence: state.nextSequence))
                    state.nextSequence += 1
                }
                for entry in entries {
                    state.log.append(entry)
                    state.logBytes += entry.bytes
                }
                trim(&state)
            }
            // Never empty here (seeded just above); a join retried on a new feed would do.
            guard let latest = state.log.last else { return .removed }
            if let end = latest.end() {
                subscriber.sink.finish(with: [end])
                onLeave(1)
                return .joined(seeded: seeded)
            }
            let readPosition = LivePosition(incarnation: read.incarnation, version: read.version)
            let ahead = readPosition.incarnation == latest.position.incarnation && readPosition.version > latest.position.version
            var events: [LiveEvent]
            if let request = subscriber.window {
                let now = ahead ? read : latest.state ?? read
                let placed = now.incarnation == read.incarnation && now.version == read.version ? readWindow : nil
                events = Self.startWindow(
                    subscriber, request, placed: placed, from: given, now: now, read: read, log: state.log, trace: state.trace)
            } else {
                events = Self.catchUp(from: token, to: latest, log: state.log, spelling: subscriber.spelling, coalesce: coalesce)
                subscriber.position = latest.position
            }
            // A subscriber the feed would reset anyway starts from the newer read instead; one
            // whose missed steps the feed holds gets them, and the rest as they arrive. (A window
            // started from the newer state already.)
            if subscriber.window == nil, ahead, events.first?.name == .reset {
                let start = LiveEntry(state: read, sequence: 0)
                events = token == readPosition ? [] : start.reset().map { [$0] } ?? []
                subscriber.position = readPosition
            }
            subscriber.delivered = latest.sequence
            guard subscriber.sink.send(events, reaching: subscriber.token) else {
                onLeave(1)
                return .joined(seeded: seeded)
            }
            state.subscribers[ObjectIdentifier(subscriber)] = subscriber
            if subscriber.window == nil { state.whole[ObjectIdentifier(subscriber)] = subscriber } else { state.windows.add(subscriber) }
            state.idleSince = nil
            return .joined(seeded: seeded)
        }
        // The feed's latest step holds the list before the session's from now on: storage for
        // the one a commit builds beside them is readied off the commit's path.
        if case .joined(seeded: true) = joined, case .flat(let items) = read.collection.shape, items.count >= ItemListSpares.shared.shortest {
            let capacity = items.count
            DispatchQueue.global().async { ItemListSpares.shared.reserve(capacity: capacity) }
        }
        return joined
    }

    private static func catchUp(from token: LivePosition?, to latest: LiveEntry, log: [LiveEntry], spelling: LiveSpelling, coalesce: Bool)
        -> [LiveEvent]
    {
        let reset = latest.reset().map { [$0] } ?? []
        guard let token else { return reset }
        if token == latest.position { return [] }
        guard token.incarnation == latest.position.incarnation else { return reset }
        // Where the coalesced delta cannot be spelled, the steps one by one follow (or a reset).
        if coalesce, let from = log.last(where: { $0.position == token })?.state, let current = latest.state,
            let change = coalesced(from: from, to: current),
            let data = try? change.json(spelling: spelling.applied(to: current.options), carrying: spelling.carried)
        {
            return [LiveEvent(name: .delta, id: latest.position.token, data: data)]
        }
        if let chain = chain(from: token, in: log) { return chain.compactMap { $0.delta(spelling) } }
        return reset
    }

    /// The changes that lead from `token` to the end of the log, each following the one
    /// before; nil where the log does not hold them all.
    private static func chain(from token: LivePosition, in log: [LiveEntry]) -> ArraySlice<LiveEntry>? {
        guard let start = log.firstIndex(where: { $0.position.incarnation == token.incarnation && $0.position.version > token.version })
        else { return nil }
        var version = token.version
        for entry in log[start...] {
            guard entry.position.incarnation == token.incarnation, entry.baseVersion == version else { return nil }
            version = entry.position.version
        }
        return log[start...]
    }

    /// One change from one state of a life to another, as `/diff` of the two collections
    /// would answer it.
    static func coalesced(from old: SessionSnapshot, to new: SessionSnapshot) -> SessionChange? {
        let policy = new.options.policy
        let owners = old.collection.owners.merging(new.collection.owners)
        let outcome: SessionChange.Outcome
        switch (old.collection.shape, new.collection.shape) {
        case (.flat(let before), .flat(let after)):
            guard let result = try? policy.animatedDelta(from: before, to: after) else { return nil }
            outcome = .flat(
                CollectionUpdate(
                    animation: result.animation, delta: result.delta, deletedItems: result.deletedIndices.map { before[$0] },
                    baseVersion: old.version, version: new.version),
                old: before, new: after)
        case (.sectioned(let before), .sectioned(let after)):
            guard let result = try? policy.animatedDelta(from: before, to: after) else { return nil }
            outcome = .sectioned(
                SectionedCollectionUpdate(
                    sectionAnimation: result.sectionAnimation, itemAnimation: result.itemAnimation, sectionDelta: result.sectionDelta,
                    itemDelta: result.itemDelta, deletedItems: result.deletedItemPaths.map { before[$0.section].items[$0.item] },
                    baseVersion: old.version, version: new.version),
                old: before, new: after)
        default: return nil
        }
        return SessionChange(id: new.id, incarnation: new.incarnation, created: false, options: new.options, outcome: outcome, owners: owners)
    }

    // MARK: - Fan-out

    /// Gives every subscriber the steps after its place, until none is left; one pass at a
    /// time per feed (`draining`), so each subscriber's events keep their order.
    private func drain() {
        while true {
            let taken = state.withLockedValue { state -> [(LiveSubscriber, ArraySlice<LiveEntry>)]? in
                guard let latest = state.log.last else {
                    state.draining = false
                    return nil
                }
                var work: [(LiveSubscriber, ArraySlice<LiveEntry>)] = []
                swap(&work, &state.passWork)
                for subscriber in state.whole.values where subscriber.delivered < latest.sequence {
                    work.append((subscriber, Self.entries(after: subscriber.delivered, in: state.log)))
                    subscriber.delivered = latest.sequence
                }
                // Windows the steps pass by are moved in their slots, in a few comparisons
                // each, so that a commit outside thousands of them costs a walk of one array.
                let now = monotonicNow()
                var steps = PassSteps()
                let previous = state.log.count > 1 ? state.log[state.log.count - 2].sequence : nil
                let quick = previous.flatMap { steps.quick(latest, after: $0) }
                let sequence = latest.sequence
                var slow: [Int] = []
                swap(&slow, &state.passSlow)
                state.windows.slots.withUnsafeMutableBufferPointer { Self.passQuickly($0, quick, latest: sequence, now: now, into: &slow) }
                defer {
                    slow.removeAll(keepingCapacity: true)
                    state.passSlow = slow
                }
                // Each left behind or due a total (`passQuickly` leaves no other).
                for at in slow {
                    let delivered = state.windows.slots[at].delivered
                    let entries = Self.entries(after: delivered, in: state.log)
                    if Self.passQuietly(&state.windows.slots[at], entries, steps: &steps, now: now) {
                        state.windows.slots[at].delivered = latest.sequence
                    } else {
                        work.append((state.windows.release(at, delivered: latest.sequence), entries))
                    }
                }
                guard !work.isEmpty else {
                    state.draining = false
                    state.passWork = work
                    return nil
                }
                return work
            }
            guard var work = taken else { return }
            let gone = deliverAll(work)
            // Its subscribers and steps let go of, its storage kept.
            work.removeAll(keepingCapacity: true)
            state.withLockedValue { $0.passWork = work }
            if !gone.isEmpty { remove(gone) }
        }
    }

    /// The log's entries after sequence `delivered`. The log is in sequence order and a
    /// subscriber is usually a step or two behind: they are found from the end, not by a walk
    /// of the whole log; and a slice shares the log's storage, so nothing is copied.
    private static func entries(after delivered: UInt64, in log: [LiveEntry]) -> ArraySlice<LiveEntry> {
        var start = log.count
        while start > 0 && log[start - 1].sequence > delivered { start -= 1 }
        return log[start...]
    }

    /// Sets a windowed subscriber's place after a pass moved it, in it and in its slot.
    func settle(_ subscriber: LiveSubscriber, at position: LivePosition?, _ place: WindowState) {
        state.withLockedValue { state in
            subscriber.position = position
            subscriber.placed = place
            state.windows.refresh(subscriber)
        }
    }

    /// Subscribers a thread of `deliverAll` takes at a time.
    private static let chunk = 128
    /// Connections a thread of `deliverAll` has libmicrohttpd resume at once. Each resume of a
    /// batch costs libmicrohttpd a walk of all its suspended connections: with 9,725 offset
    /// windows shifted by one insert, batches of 1,024 rather than of a chunk (128) took the
    /// server's CPU a commit from about 470 to 400 ms, and the first subscriber's event from
    /// about 25 to 45 ms; the last one's moved within this machine's noise.
    private static let wakes = 1_024

    /// Delivers a pass's work; returns the subscribers gone. A large pass (an insert at the
    /// top of a session that thousands follow through windows: each is sent its own event) is
    /// spread over the cores: a thread each, taking chunks in turn; a subscriber is in one
    /// chunk only, and the pass ends when every chunk has, so each subscriber's events keep
    /// their order.
    private func deliverAll(_ work: [(LiveSubscriber, ArraySlice<LiveEntry>)]) -> [LiveSubscriber] {
        let chunks = (work.count + Self.chunk - 1) / Self.chunk
        let taken = Atomic<Int>(0)
        // Chunks until none is left, their connections resumed in batches (`batchingWakes`).
        @Sendable func deliverChunks() -> [LiveSubscriber] {
            HTTPStream.batchingWakes(limit: Self.wakes) {
                var gone: [LiveSubscriber] = []
                while case let index = taken.add(1, ordering: .relaxed).oldValue, index < chunks {
                    let part = work[index * Self.chunk..<min(work.count, (index + 1) * Self.chunk)]
                    gone += part.filter { !deliver($0.1, to: $0.0) }.map(\.0)
                }
                return gone
            }
        }
        let threads = min(chunks, HTTPServer.processorCount)
        guard threads > 1 else { return deliverChunks() }
        let gone = NIOLockedValueBox<[LiveSubscriber]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            let lost = deliverChunks()
            if !lost.isEmpty { gone.withLockedValue { $0 += lost } }
        }
        return gone.withLockedValue { $0 }
    }

    /// Sends `entries` (a subscriber's missed steps, in order); false where it is gone or done.
    /// Only the drain pass moves a joined subscriber's place; it is read and written under the
    /// lock all the same, as `tick` reads it.
    private func deliver(_ entries: ArraySlice<LiveEntry>, to subscriber: LiveSubscriber) -> Bool {
        if subscriber.window != nil { return deliverWindow(entries, to: subscriber) }
        var position = state.withLockedValue { _ in subscriber.position }
        var events: [LiveEvent] = []
        for entry in entries {
            // Steps the subscriber started past (it joined from a newer read).
            if let position, entry.position.incarnation == position.incarnation, entry.position.version <= position.version { continue }
            if let end = entry.end() {
                guard entry.position.incarnation == position?.incarnation else { continue }
                subscriber.sink.finish(with: events + [end])
                return false
            }
            let follows = position.map { entry.position.incarnation == $0.incarnation && entry.baseVersion == $0.version } ?? false
            if follows, let delta = entry.delta(subscriber.spelling) {
                events.append(delta)
            } else if let reset = entry.reset() {
                // A gap, or a new life: the state after this step, whole.
                events = [reset]
            }
            position = entry.position
        }
        let token = state.withLockedValue { _ in
            subscriber.position = position
            return subscriber.token
        }
        return subscriber.sink.send(events, reaching: token)
    }

    /// Drops subscribers (those already dropped are passed over).
    func remove(_ gone: [LiveSubscriber]) {
        let left = state.withLockedValue { state -> Int in
            var left = 0
            for subscriber in gone where state.subscribers.removeValue(forKey: ObjectIdentifier(subscriber)) != nil {
                state.whole[ObjectIdentifier(subscriber)] = nil
                state.windows.remove(subscriber)
                left += 1
            }
            if state.subscribers.isEmpty && state.idleSince == nil { state.idleSince = monotonicNow() }
            return left
        }
        if left > 0 { onLeave(left) }
    }

    // MARK: - For the hub

    /// The least time between two passes a tick starts for windows' totals.
    static let totalsPassInterval: Int64 = 100_000_000

    /// Heartbeats and poll deadlines; drops subscribers that are gone. Returns how many left.
    func tick(now: Int64) -> Int {
        let (subscribers, wake) = state.withLockedValue { state in
            // A token is spelled only for a tick that may send it: not for thousands of
            // heartbeats a second.
            let subscribers = state.subscribers.values.map { ($0, $0.sink.needsToken(now: now) ? $0.token : nil) }
            // Windows told nothing but a total for a while are sent it by a fan-out pass, in
            // order with their other events. Such a pass walks every window, so ticks start
            // one every tenth of a second at most, not every tick: totals, each on its
            // window's beat (`WindowState.totalDue`), go out within 100 ms of it.
            guard !state.draining, now - state.totalsPass >= Self.totalsPassInterval, state.windows.anyDue(now) else {
                return (subscribers, false)
            }
            state.draining = true
            state.totalsPass = now
            return (subscribers, true)
        }
        if wake, !fanOut.run({ self.drain() }) { state.withLockedValue { $0.draining = false } }
        let gone = subscribers.filter { !$0.0.sink.tick(now: now, token: $0.1) }.map(\.0)
        if !gone.isEmpty { remove(gone) }
        return gone.count
    }

    /// Lets go of the feed where it has had no subscriber for `linger` nanoseconds.
    func removeIfIdle(now: Int64, linger: Int64) -> Bool {
        state.withLockedValue { state in
            guard state.subscribers.isEmpty, let since = state.idleSince, now - since >= linger else { return false }
            state.removed = true
            return true
        }
    }

    /// Ends every subscriber with `event` (the server is stopping).
    func finishAll(with event: LiveEvent) -> Int {
        let subscribers = state.withLockedValue { state in
            let all = Array(state.subscribers.values)
            state.subscribers = [:]
            state.whole = [:]
            state.windows.removeAll()
            state.idleSince = monotonicNow()
            return all
        }
        for subscriber in subscribers { subscriber.sink.finish(with: [event]) }
        if !subscribers.isEmpty { onLeave(subscribers.count) }
        return subscribers.count
    }

    var subscriberCount: Int { state.withLockedValue { $0.subscribers.count } }

    /// Runs `body` under the feed's lock (what subscribers' places are read and written under).
    func underLock<T>(_ body: () -> T) -> T { state.withLockedValue { _ in body() } }

    /// The session at `position`, where the feed still holds it.
    func state(at position: LivePosition) -> SessionSnapshot? {
        state.withLockedValue { state in state.log.last { $0.position == position }?.state }
    }

    /// The latest state the feed holds, and how many steps it keeps.
    var history: (latest: LivePosition?, versions: Int, bytes: Int) {
        state.withLockedValue { ($0.log.last?.position, $0.log.count, $0.logBytes) }
    }
}
