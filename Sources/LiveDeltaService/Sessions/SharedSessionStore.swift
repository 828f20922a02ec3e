import LiveCollections
import Logging

import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Sessions in storage shared by replicas (Redis: `redis(...)` in LiveDeltaRedis), so that they outlive a process
/// and replicas share them.
///
/// Each change follows the memory store's rules (`SessionRules`) on a parsed copy of the
/// session at its stored version, then commits with a compare-and-set on that version. A
/// replica whose commit loses re-reads and tries again when the request named no version, and
/// answers 412 when it did: every committed delta is computed against exactly the version it
/// replaces. Copies of recently used sessions are kept, so a change reads the whole session
/// only when another replica has moved it on. The storage (`SharedStorage`) knows only bytes,
/// versions and compare-and-set.
package final class SharedSessionStore: SessionStore {
    package struct Limits: Sendable {
        /// A session unused this long expires (refreshed on each use).
        package var idleTimeout: Duration = .seconds(15 * 60)
        package var maxItemsPerSession = 100_000
        /// Parsed sessions kept in this process.
        package var cachedSessions = 256
        /// Bytes the parsed sessions kept in this process take together (`SessionFootprint`).
        package var cachedBytes = 1 << 30
        /// Commits that lose to another replica are tried again, at once, up to this many times
        /// in all.
        package var attempts = 16
        /// Sessions, and their bytes (`SessionFootprint`), of one tenant: counted by storage,
        /// with every replica's commits, in the step that commits. A tenant at a quota is
        /// refused (429); storage evicts nothing to make room, since it cannot tell which of a
        /// tenant's sessions another replica is using.
        package var maxSessionsPerTenant = 1_000
        package var maxBytesPerTenant = 256 << 20

        package init() {}
    }

    package let limits: Limits
    private let storage: any SharedStorage
    private let events: @Sendable (SessionEvent) -> Void
    /// A parsed copy, and the incarnation it belongs to.
    private struct Entry: Sendable {
        let session: OpenSession
        let incarnation: String
        /// The bytes it takes (`SessionFootprint`), counted when it was last remembered.
        var bytes: Int
    }
    private struct Cache: Sendable {
        var sessions: [String: Entry] = [:]
        var recency = RecencyList<String>()
        /// The entries' bytes, summed.
        var bytes = 0

        mutating func remove(_ id: String) {
            if let gone = sessions.removeValue(forKey: id) { bytes -= gone.bytes }
            recency.remove(id)
        }
    }
    private let cache = NIOLockedValueBox(Cache())

    /// Sessions in `storage` (Redis: `SharedSessionStore.redis` in LiveDeltaRedis).
    package init(storage: any SharedStorage, limits: Limits, events: @escaping @Sendable (SessionEvent) -> Void) {
        self.storage = storage
        self.limits = limits
        self.events = events
    }

    package var statistics: SessionStatistics {
        SessionStatistics(open: cache.withLockedValue { $0.sessions.count }, evicted: 0, expired: 0)
    }

    package var isReady: Bool { storage.isReady }

    private let observer = NIOLockedValueBox<(any SessionObserver)?>(nil)
    /// For each followed session, the last step of its log told to the observer.
    private let cursors = NIOLockedValueBox<[String: String]>([:])
    /// For each followed session another replica changes, the copy its logged steps take
    /// forward (`PartedSession`): as many bytes again as the session's text, on this replica.
    private let copies = NIOLockedValueBox<[String: PartedSession]>([:])
    /// This replica's commits whose steps the listener may read before their threads have
    /// told the observer.
    private let ownCommits = OwnCommits()

    /// Steps reach the observer from the sessions' logs in storage, whichever replica
    /// committed them, in storage's order; this replica's own commits reach it first from the
    /// committing thread (`committedHere`), which has the change in hand, and their logged
    /// steps are then passed by.
    package func observe(with observer: any SessionObserver) {
        self.observer.withLockedValue { $0 = observer }
        storage.listen(
            onStep: { [weak self] id in self?.catchUp(id) },
            onListening: { [weak self] kept in
                // Announcements made while this replica was not listening are lost, and a
                // Redis that restarted (or failed over) may have lost the logs and the marks
                // too: mark every followed session again, and read the session and its log
                // (`resync`). Where storage kept everything (a cluster's slot moved), the logs
                // hold every step missed: they are read, all in one round trip a node.
                guard let self, let observer = self.observer.withLockedValue({ $0 }) else { return }
                let ids = observer.followedIDs
                self.storage.follow(ids)
                if kept {
                    self.catchUp(ids)
                } else {
                    for id in ids { self.resync(id, observer) }
                }
            })
    }

    /// Marks the sessions followed, and ends those that expired in storage meanwhile (Redis
    /// drops an idle session without a word: the hub asks about every ten seconds).
    package func follow(_ ids: [String]) {
        storage.follow(ids)
        guard let observer = observer.withLockedValue({ $0 }) else { return }
        // What the listener keeps of sessions no longer followed (no step may come to say so).
        for id in copies.withLockedValue({ Array($0.keys) }) where !observer.follows(id: id) { forgetLog(of: id) }
        // The lives are noted before storage is asked: a session created again meanwhile is
        // another life, which an end of the noted one leaves alone.
        let lives = ids.map { observer.incarnation(of: $0) }
        guard let existing = storage.existing(ids) else { return }
        for (id, life) in zip(ids, lives) where !existing.contains(id) {
            if let life { observer.ended(id: id, incarnation: life, reason: .expired) }
        }
    }

    package func close() { storage.stopListening() }

    package func feedStarted(id: String) {
        // Through storage, so that the log is read on the listening thread, in order with
        // every other step.
        storage.announce(id)
    }

    package func loggedSteps(id: String, incarnation: String, from version: UInt64) -> [LoggedState] {
        // The states from `version` on are the session now, taken back step by step: over a
        // change by the parts it logged, to a collection written whole by its logged text.
        // The log is read after the session: a commit logs its step with it, so the log then
        // holds every step up to the session read (read before, it missed a commit made in
        // between, and the walk back found no step for the version read).
        guard let now = try? storage.readParts(id), let steps = try? storage.steps(of: id, after: nil), let stored = now.stored,
            now.incarnation == incarnation, now.version >= version
        else { return [] }
        var made: [UInt64: LoggedStep] = [:]
        for step in steps where step.incarnation == incarnation { made[step.version] = step }
        var parted: PartedSession? = now
        var states: [StoredSession] = [stored]
        while let latest = states.last, latest.version > version {
            guard let step = made[latest.version], let base = step.baseVersion else { return [] }
            if var copy = parted, case .parts(let parts) = step.content, copy.undo(step, parts), let before = copy.stored {
                copy.options = made[base]?.options ?? copy.options
                parted = copy
                states.append(StoredSession(version: base, incarnation: incarnation, options: copy.options, data: before.data, parts: before.parts))
            } else if let prior = made[base], case .whole(let data) = prior.content {
                parted = nil
                states.append(StoredSession(version: base, incarnation: incarnation, options: prior.options, data: data))
            } else {
                return []
            }
        }
        var logged: [LoggedState] = []
        for state in states.reversed() {
            guard let session = try? SessionCodec.decode(id: id, state) else { return [] }
            let step = made[state.version]
            logged.append(
                LoggedState(snapshot: SessionRules.snapshot(of: session), appended: step?.step == .append, baseVersion: step?.baseVersion))
        }
        return logged
    }

    /// Tells the observer the session as storage holds it now, or that it is gone. The log is
    /// read once more after the session: steps committed meanwhile reach the observer as
    /// steps (subscribers get their deltas), and the session whole is taken only where the log
    /// does not hold it (a Redis that restarted, a session not logged).
    private func resync(_ id: String, _ observer: any SessionObserver) {
        // A Redis that restarted may have begun the session again: the copy is read anew.
        _ = copies.withLockedValue { $0.removeValue(forKey: id) }
        do throws(SessionError) {
            let current = try snapshot(id: id)
            catchUp(id)
            observer.replaced(current)
        } catch {
            if case .notFound = error, let incarnation = observer.incarnation(of: id) {
                observer.ended(id: id, incarnation: incarnation, reason: .expired)
            }
        }
    }

    /// `catchUp` for every session in `ids`, their logs read together.
    private func catchUp(_ ids: [String]) {
        let held = cursors.withLockedValue { $0 }
        let logs = ids.map { (id: $0, cursor: held[$0]) }
        for (log, steps) in zip(logs, storage.steps(of: logs)) {
            if let steps { catchUp(log.id, steps: steps, after: log.cursor) } else { catchUp(log.id) }
        }
    }

    /// Tells the observer the steps of a followed session's log it has not been told yet. Runs
    /// on the listening thread only, so one session's steps are told in order.
    private func catchUp(_ id: String) {
        guard let observer = observer.withLockedValue({ $0 }) else { return }
        guard observer.follows(id: id) else {
            forgetLog(of: id)
            return
        }
        let cursor = cursors.withLockedValue { $0[id] }
        guard let steps = try? storage.steps(of: id, after: cursor) else { return }
        catchUp(id, steps: steps, after: cursor)
    }

    /// `catchUp` with the log's `steps` after `cursor` read.
    private func catchUp(_ id: String, steps: [LoggedStep], after cursor: String?) {
        var steps = steps
        guard let observer = observer.withLockedValue({ $0 }) else { return }
        guard observer.follows(id: id) else {
            forgetLog(of: id)
            return
        }
        guard let last = steps.last else { return }
        cursors.withLockedValue { $0[id] = last.cursor }
        if cursor == nil, let life = observer.incarnation(of: id), let first = steps.firstIndex(where: { $0.incarnation == life }) {
            // A first read of the log holds the steps of earlier lives too (the log outlives a
            // replacement): those before the observer's own life's first step are older than
            // what it holds, and would take it back to a life that has ended. A log without
            // that life is newer than it (Redis lost its data, and the session began again):
            // all of it is read.
            steps = Array(steps[first...])
        }
        for (index, step) in steps.enumerated() {
            if step.step == .deleted {
                _ = copies.withLockedValue { $0.removeValue(forKey: id) }
                observer.ended(id: id, incarnation: step.incarnation, reason: .deleted)
                continue
            }
            // This replica's own commit, read from the log before its thread has told the
            // observer: told in a moment, rather than read whole.
            ownCommits.waitForCommit(of: id, version: step.version, atMost: .seconds(2))
            if observer.holds(id: id, incarnation: step.incarnation, version: step.version) {
                // Told already (this replica's own commit, or the read its feed started from):
                // the copy is kept in step where it has one, and nothing is read.
                copies.withLockedValue { copies in
                    guard var copy = copies[id] else { return }
                    if case .parts(let parts) = step.content, copy.apply(step, parts) {
                        copies[id] = copy
                    } else if copy.incarnation != step.incarnation || copy.version < step.version {
                        copies[id] = nil
                    }
                }
                continue
            }
            let read: StoredSession?
            do throws(SessionError) {
                read = try session(id, after: step)
            } catch {
                // Storage did not answer: this step and those after it are left to the next
                // catch-up (the next step heard, or the resync once storage is back), rather
                // than passed by for the step after to find its base missing and reset.
                // Anything else it said of the session will not change by asking again.
                guard case .storeUnavailable = error else { continue }
                let before = index > 0 ? steps[index - 1].cursor : cursor
                cursors.withLockedValue { $0[id] = before }
                return
            }
            guard let stored = read, let session = try? SessionCodec.decode(id: id, stored) else { continue }
            let snapshot = SessionRules.snapshot(of: session)
            // A session read at a later version than the step's has passed steps by: it is
            // taken whole.
            let chained = stored.version == step.version
            switch step.step {
            case .update: observer.stored(snapshot, appended: false, baseVersion: chained ? step.baseVersion : nil)
            case .append: observer.stored(snapshot, appended: chained, baseVersion: chained ? step.baseVersion : nil)
            case .replaced, .deleted: observer.replaced(snapshot)
            }
        }
    }

    /// The session after a logged step: the copy taken forward by the parts it logged, else
    /// the session read now (at the step's version or later, kept as the copy). Nil where the
    /// copy is already past the step, or storage holds another life (its own step comes);
    /// throws where storage could not be read.
    private func session(_ id: String, after step: LoggedStep) throws(SessionError) -> StoredSession? {
        if case .whole(let data) = step.content {
            _ = copies.withLockedValue { $0.removeValue(forKey: id) }
            return StoredSession(version: step.version, incarnation: step.incarnation, options: step.options, data: data)
        }
        let copy = copies.withLockedValue { copies -> PartedSession? in
            guard var copy = copies[id], copy.incarnation == step.incarnation else { return nil }
            if case .parts(let parts) = step.content, copy.apply(step, parts) { copies[id] = copy }
            return copy
        }
        if let copy, copy.version >= step.version {
            return copy.version == step.version ? copy.stored : nil
        }
        guard let read = try storage.readParts(id) else {
            // Stored whole (by an earlier version), or gone: read as a request would.
            _ = copies.withLockedValue { $0.removeValue(forKey: id) }
            guard let whole = try storage.read(id, via: nil), whole.incarnation == step.incarnation, whole.version >= step.version else {
                return nil
            }
            return whole
        }
        copies.withLockedValue { $0[id] = read }
        guard read.incarnation == step.incarnation, read.version >= step.version else { return nil }
        return read.stored
    }

    /// Drops what the listener keeps of a session no longer followed.
    private func forgetLog(of id: String) {
        _ = cursors.withLockedValue { $0.removeValue(forKey: id) }
        _ = copies.withLockedValue { $0.removeValue(forKey: id) }
    }

    // MARK: - SessionStore

    package func put(id: String, options: DiffOptions, collection: JSONCollection) throws(SessionError) -> (SessionSnapshot, created: Bool) {
        try SessionRules.checkSize(collection.itemCount, limit: limits.maxItemsPerSession)
        let incarnation = SessionCodec.newIncarnation()
        let session = OpenSession(
            id: id, incarnation: incarnation, options: options, holder: try SessionRules.holder(for: collection, options: options),
            owners: collection.owners, now: 0)
        let parts = PartPlanner.whole(collection)
        guard case .committed(let previous) = try commit(session, incarnation: incarnation, expecting: .any, data: .parts(parts), step: .replaced)
        else {
            throw .conflict
        }
        session.storedParts = parts.manifest
        remember(session, incarnation)
        return (SessionSnapshot(id: id, incarnation: incarnation, options: options, version: 0, collection: collection), previous == nil)
    }

    package func snapshot(id: String) throws(SessionError) -> SessionSnapshot {
        guard let snapshot = try withCurrent(id, { session, _ throws(SessionError) in SessionRules.snapshot(of: session) }) else {
            throw .notFound(id: id)
        }
        return snapshot
    }

    /// Read from the parts that hold them where this replica holds no copy of the session; a
    /// copy it holds answers whole (`snapshot`), as cheaply.
    package func rows(id: String, _ rows: (Int) -> Range<Int>) throws(SessionError) -> SessionRows? {
        guard cache.withLockedValue({ $0.sessions[id] }) == nil, let stored = try storage.readUnits(id, rows) else { return nil }
        return try SessionCodec.decode(id: id, stored)
    }

    /// Read from the parts that hold the window, found by its anchor's id hash, where this
    /// replica holds no copy of the session (a copy it holds answers whole, as cheaply).
    package func rows(id: String, anchorID: String, _ rows: (_ anchor: Int, _ count: Int) -> Range<Int>) throws(SessionError) -> AnchoredRows? {
        guard cache.withLockedValue({ $0.sessions[id] }) == nil else { return nil }
        var lookup: ItemLookup?
        var notUnique = false
        var anchor: (position: Int, id: String)?
        let read = try storage.readUnits(id) { shape, bytes in
            guard let options = try? DiffOptions(try parseOptions(bytes), at: JSONPointer("options")) else { return nil }
            switch shape {
            case .flat:
                notUnique = !options.unique
                lookup = notUnique ? nil : ItemLookup(id: anchorID, options: options)
            case .sectioned:
                lookup = ItemLookup(sectionID: anchorID, options: options)
            }
            return lookup?.stableIDHash
        } _: { candidate in
            guard let lookup, let read = try? SessionCodec.decode(id: id, candidate), let position = lookup.position(in: read.snapshot.collection)
            else { return nil }
            anchor = (read.first + position, read.snapshot.collection.unitID(at: position) ?? anchorID)
            return rows(read.first + position, read.count)
        }
        if notUnique { return .notUnique }
        // An anchor found in no part is looked for in the session read whole, which answers
        // as it always did (the id is gone, or never was), and is then this replica's copy.
        guard case .read(let units) = read, let anchor else { return nil }
        return .rows(try SessionCodec.decode(id: id, units), anchor: anchor.position, anchorID: anchor.id)
    }

    package func options(id: String) -> DiffOptions? {
        if let cached = cache.withLockedValue({ $0.sessions[id] }) { return cached.session.options }
        guard let bytes = storage.options(of: id), let value = try? parseOptions(bytes)
        else { return nil }
        return try? DiffOptions(value, at: JSONPointer("options"))
    }

    package func update(
        id: String, to collection: JSONCollection, readWith: DiffOptions, condition: VersionCondition, commit: Bool
    ) throws(SessionError) -> SessionChange {
        try SessionRules.checkSize(collection.itemCount, limit: limits.maxItemsPerSession)
        // What an update commits is the request's collection: its text is made and written to
        // storage before the session's lock is taken, not while others wait for it; the commit
        // made under the lock is then a few bytes.
        var staged: (data: any StagedData, parts: [StoredPart])?
        if commit {
            let parts = PartPlanner.whole(collection)
            staged = (try storage.stage(id, parts), parts.manifest)
            events(.storeWritten(parts.writtenBytes))
        }
        defer { if let staged { storage.finish(staged.data) } }
        return try change(
            id: id, condition: condition, creating: commit && condition == .any ? (collection, readWith) : nil, readWith: readWith,
            staged: staged, step: .update
        ) { session, created throws(SessionError) in
            try SessionRules.update(session, to: collection, condition: condition, commit: commit, created: created)
        } committing: {
            commit
        }
    }

    package func append(id: String, _ collection: JSONCollection, readWith: DiffOptions, condition: VersionCondition) throws(SessionError)
        -> SessionChange
    {
        try change(id: id, condition: condition, creating: nil, readWith: readWith, staged: nil, step: .append) { session, _ throws(SessionError) in
            try SessionRules.append(session, collection, condition: condition, maxItems: limits.maxItemsPerSession)
        } committing: {
            true
        }
    }

    package func edit(id: String, condition: VersionCondition, _ edit: SessionEdit) throws(SessionError) -> SessionChange {
        // Never on a copy not checked against storage: an edit refused on a stale copy (an id
        // another replica has just inserted) would be refused wrongly, with no commit to fail.
        try change(id: id, condition: condition, creating: nil, readWith: nil, staged: nil, step: .update, optimistic: false) {
            session, _ throws(SessionError) in
            try SessionRules.commit(session, try SessionRules.prepare(session, edit, condition: condition, maxItems: limits.maxItemsPerSession))
        } committing: {
            true
        }
    }

    package func delete(id: String, condition: VersionCondition) throws(SessionError) {
        let version: UInt64?
        switch condition {
        case .any, .exists: version = nil
        case .version(let number): version = number
        case .anyOf(let versions):
            // The current version, if listed; the delete then insists on it.
            guard let stored = try storage.version(of: id, via: nil) else { throw .versionMismatch(expected: condition, current: nil) }
            guard versions.contains(stored.version) else { throw .versionMismatch(expected: condition, current: stored.version) }
            version = stored.version
        }
        let outcome = try storage.delete(id, expectingVersion: version)
        forget(id)
        switch outcome {
        case .deleted: return
        case .mismatch(let current): throw .versionMismatch(expected: condition, current: current)
        case .absent:
            if condition == .any { throw .notFound(id: id) }
            throw .versionMismatch(expected: condition, current: nil)
        }
    }

    // MARK: - One change

    /// Runs `rules` on the session as stored now (or on a new, empty one, where `creating` says
    /// so) under its step lock, and commits the result with a compare-and-set on the version it
    /// started from; where another replica committed first, reads again and repeats, unless the
    /// request named a version. The commit writes what is `staged` (the new collection, whole,
    /// and its parts), else the parts the change rewrote.
    ///
    /// A lost commit tries again at once, without a pause: losing means another replica's commit
    /// landed, the next round reads it, and this replica's own writers already queue on the
    /// session's step lock. A random pause between rounds made replicas collide a little less
    /// but finish the same load later, and held a waiting thread asleep.
    private func change(
        id: String, condition: VersionCondition, creating: (collection: JSONCollection, options: DiffOptions)?, readWith: DiffOptions?,
        staged: (data: any StagedData, parts: [StoredPart])?, step: StoredStep, optimistic: Bool = true,
        _ rules: (OpenSession, Bool) throws(SessionError) -> SessionChange, committing: () -> Bool
    ) throws(SessionError) -> SessionChange {
        /// One try: the change, or nil where another replica committed first.
        func attempt(_ session: OpenSession, incarnation: String?) throws(SessionError) -> SessionChange? {
            // An edit reads nothing before it runs: whatever the options, it reads by them.
            if let readWith, !session.options.readsLike(readWith) { throw .optionsChanged(session.options) }
            let base = session.holder.version
            // Held until the commit: its documents, kept alive, tell unchanged items by address.
            let before = session.collection
            let change = try rules(session, incarnation == nil)
            guard committing() else { return change }
            let stored = incarnation ?? session.incarnation
            let expected: StoredExpectation = incarnation.map { .version(base, incarnation: $0) } ?? .absent
            let data: CommitData
            let parts: [StoredPart]
            if let staged {
                (data, parts) = (.staged(staged.data), staged.parts)
            } else {
                let written =
                    incarnation == nil
                    ? PartPlanner.whole(session.collection)
                    : PartPlanner.change(
                        from: before, stored: session.storedParts ?? [], to: session.collection,
                        naming: String(session.holder.version, radix: 36) + ".", copied: change.copied)
                (data, parts) = (.parts(written), written.manifest)
            }
            let outcome: CommitOutcome
            // Until the observer is told (below), or the commit fails.
            if incarnation != nil { ownCommits.begin(id, version: session.holder.version) }
            defer { if incarnation != nil { ownCommits.end(id) } }
            do throws(SessionError) {
                outcome = try withExtendedLifetime(before) { () throws(SessionError) in
                    try commit(session, incarnation: stored, expecting: expected, data: data, step: incarnation == nil ? .replaced : step)
                }
            } catch {
                // Storage may or may not have taken the change (a timeout does not say), but
                // the copy has moved on either way.
                discard(session)
                throw error
            }
            switch outcome {
            case .committed:
                session.storedParts = parts
                remember(session, stored)
                if incarnation != nil, let observer = observer.withLockedValue({ $0 }), observer.follows(id: id) {
                    observer.committedHere(change)
                }
                return change
            case .conflict(let current):
                events(.conflict)
                discard(session)
                if condition.namesVersions { throw .versionMismatch(expected: condition, current: current) }
                return nil
            }
        }
        for round in 0..<max(1, limits.attempts) {
            // Only a first try trusts the copy without asking: a lost commit has forgotten it.
            // Reads go where the staged write went, after it.
            if let found = try withCurrent(
                id, optimistic: optimistic && committing() && round == 0, via: staged?.data,
                { session, incarnation throws(SessionError) in
                    try attempt(session, incarnation: incarnation)
                })
            {
                guard let change = found else { continue }
                return change
            }
            guard let creating else {
                if condition == .any { throw .notFound(id: id) }
                throw .versionMismatch(expected: condition, current: nil)
            }
            let fresh = OpenSession(
                id: id, options: creating.options, holder: try SessionRules.holder(for: creating.collection.emptied, options: creating.options),
                owners: DocumentOwners(), now: 0)
            fresh.step.lock()
            defer { fresh.step.unlock() }
            if let change = try attempt(fresh, incarnation: nil) { return change }
        }
        throw .conflict
    }

    /// The session's state, in storage where what is stored is still `expected`: its collection
    /// is `data`.
    private func commit(
        _ session: OpenSession, incarnation: String, expecting expected: StoredExpectation, data: CommitData, step: StoredStep
    ) throws(SessionError) -> CommitOutcome {
        let outcome = try storage.commit(
            session.id, version: session.holder.version, incarnation: incarnation, options: SessionCodec.encode(session.options),
            data: data, expecting: expected, step: step, footprint: SessionFootprint.of(session.collection))
        if case .parts(let parts) = data { events(.storeWritten(parts.writtenBytes)) }
        return outcome
    }

    /// Runs `body` on the session as stored now, holding its step lock: the cached copy where
    /// it is still at the stored version (checked under the lock, so a change this process is
    /// committing is never mistaken for another replica's), else the session read and parsed
    /// again. Nil, without running `body`, where there is no such session. Each read refreshes
    /// the session's idle timeout.
    ///
    /// A change that commits may skip the version check (`optimistic`): its compare-and-set
    /// fails where the copy is out of date, and it then reads again. That saves a round trip
    /// on every change to a session this replica keeps. Reads go `via` the request's staged
    /// write, where it has one.
    private func withCurrent<T>(
        _ id: String, optimistic: Bool = false, via staged: (any StagedData)? = nil, _ body: (OpenSession, String) throws(SessionError) -> T
    ) throws(SessionError) -> T? {
        let cached = cache.withLockedValue { cache -> Entry? in
            guard let entry = cache.sessions[id] else { return nil }
            cache.recency.touch(id)
            return entry
        }
        if let cached {
            cached.session.step.lock()
            defer { cached.session.step.unlock() }
            if !cached.session.stale.load(ordering: .acquiring) {
                if optimistic {
                    events(.cacheHit)
                    return try body(cached.session, cached.incarnation)
                }
                guard let stored = try storage.version(of: id, via: staged) else {
                    forget(id)
                    return nil
                }
                if stored.version == cached.session.holder.version && stored.incarnation == cached.incarnation {
                    events(.cacheHit)
                    return try body(cached.session, cached.incarnation)
                }
            }
        }
        events(.cacheMiss)
        guard let stored = try storage.read(id, via: staged) else {
            forget(id)
            return nil
        }
        let session = try SessionCodec.decode(id: id, stored)
        // Locked before others can see it: a change another thread started on it first could
        // lose its commit and leave the copy moved on, and `body` would diff against that.
        session.step.lock()
        defer { session.step.unlock() }
        remember(session, stored.incarnation)
        return try body(session, stored.incarnation)
    }

    // MARK: - Pieces

    /// Keeps a parsed copy, whose step lock the caller holds (or that no one else can see yet),
    /// counting its bytes. A copy moves on in place only in a change, which ends here again
    /// where it commits and in `discard` where it does not, so the count stays true.
    private func remember(_ session: OpenSession, _ incarnation: String) {
        let bytes = SessionFootprint.of(session.collection)
        cache.withLockedValue { cache in
            cache.remove(session.id)
            cache.sessions[session.id] = Entry(session: session, incarnation: incarnation, bytes: bytes)
            cache.bytes += bytes
            cache.recency.touch(session.id)
            trim(&cache)
        }
    }

    /// Drops the least recently used copies beyond the limits. Only the cache lets go of them:
    /// a request using one keeps it until it is done.
    private func trim(_ cache: inout Cache) {
        while cache.sessions.count > max(1, limits.cachedSessions) || cache.bytes > limits.cachedBytes, let oldest = cache.recency.oldest {
            cache.remove(oldest)
        }
    }

    /// The bytes the kept copies take now.
    package var cachedBytes: Int { cache.withLockedValue { $0.bytes } }

    /// A copy whose holder has moved past what storage holds (its commit lost or failed): no
    /// one may diff against it again. Whoever waits for its lock sees `stale` and reads anew.
    private func discard(_ session: OpenSession) {
        session.stale.store(true, ordering: .releasing)
        cache.withLockedValue { cache in
            guard cache.sessions[session.id]?.session === session else { return }
            cache.remove(session.id)
        }
    }

    private func forget(_ id: String) {
        cache.withLockedValue { cache in cache.remove(id) }
    }
}
