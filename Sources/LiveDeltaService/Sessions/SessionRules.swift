import LiveCollections
import Synchronization

import struct NIOConcurrencyHelpers.NIOLock

/// A session's data as a holder (LiveCollections' `CollectionData` or `CollectionSectionData`).
enum SessionCollection: Sendable {
    case flat(CollectionData<JSONItem>)
    case sectioned(CollectionSectionData<JSONSection>)

    var version: UInt64 {
        switch self {
        case .flat(let data): data.version
        case .sectioned(let data): data.version
        }
    }

    /// The items held, in all sections.
    var itemCount: Int {
        switch self {
        case .flat(let data): data.items.count
        case .sectioned(let data): data.sections.itemCount
        }
    }

    /// The refusal of a collection of the other kind (flat for a sectioned session, or the
    /// reverse).
    var kindMismatch: SessionError {
        switch self {
        case .flat: .kindMismatch(sessionIsSectioned: false)
        case .sectioned: .kindMismatch(sessionIsSectioned: true)
        }
    }
}

/// A session held in memory: by the memory store for its life, by a shared store as the
/// parsed copy of what storage holds at `holder.version`.
final class OpenSession: Sendable {
    let id: String
    /// This life of the session: a new token each time it is created or replaced, so that a
    /// version of one life is never taken for the same version of another.
    let incarnation: String
    let options: DiffOptions
    let holder: SessionCollection
    /// Monotonic nanoseconds of the last use.
    let lastUsed: Atomic<UInt64>
    /// Operations in progress: such a session is not idle, so not evicted or expired.
    let users = Atomic<Int>(0)
    /// Held for the whole of each change: read, check, diff, commit.
    let step = NIOLock()
    /// A shared store's copy that no longer matches storage (a commit there failed after the
    /// holder had moved on): whoever holds it next reads the session again.
    let stale = Atomic<Bool>(false)
    /// The memory store replaced or removed this session: changes that still reach it (they
    /// took it before) are not told to observers, whose view has moved on to the next life.
    /// Set and read under `step`.
    // nonisolated(unsafe): every access holds `step` (a lock).
    nonisolated(unsafe) var retired = false
    /// The documents the holder's items point into. Read and written only under `step`, as are
    /// the holder's items whenever they are read with them.
    // nonisolated(unsafe): every access holds `step` (a lock), so no two threads race on it.
    nonisolated(unsafe) var owners: DocumentOwners
    /// The parts a shared store's storage holds this copy's collection in, at its version;
    /// nil where unknown (the next commit writes it whole). Read and written only under `step`.
    // nonisolated(unsafe): every access holds `step` (a lock).
    nonisolated(unsafe) var storedParts: [StoredPart]?
    /// The bytes the memory store counts for this session while it is in the store's table.
    // nonisolated(unsafe): read and written only under that store's table lock.
    nonisolated(unsafe) var countedBytes = 0

    init(
        id: String, incarnation: String = SessionCodec.newIncarnation(), options: DiffOptions, holder: SessionCollection, owners: DocumentOwners,
        now: UInt64
    ) {
        self.id = id
        self.incarnation = incarnation
        self.options = options
        self.holder = holder
        self.owners = owners
        lastUsed = Atomic(now)
    }

    /// The items held now, with their documents. The caller holds `step`.
    var collection: JSONCollection {
        switch holder {
        case .flat(let data): .flat(data.items, owners: owners)
        case .sectioned(let data): .sectioned(data.sections, owners: owners)
        }
    }
}

/// The rules of a change to a session, shared by every store: check the condition and the item
/// limit, number repeated ids, diff and commit to the holder. The caller holds the session's
/// `step` lock throughout, so every figure in the answer comes from one state.
enum SessionRules {
    static func update(
        _ session: OpenSession, to collection: JSONCollection, condition: VersionCondition, commit: Bool, created: Bool
    ) throws(SessionError) -> SessionChange {
        do {
            let version = try check(condition, against: session.holder.version)
            let owners = session.owners.merging(collection.owners)
            let outcome: SessionChange.Outcome
            switch (session.holder, collection.shape) {
            case (.flat(let data), .flat(let items)):
                let old = data.items
                let update = commit ? try data.update(items, ifVersion: version) : try data.calculateDelta(items, ifVersion: version)
                outcome = .flat(update, old: old, new: items)
            case (.sectioned(let data), .sectioned(let sections)):
                let old = data.sections
                let update = commit ? try data.update(sections, ifVersion: version) : try data.calculateDelta(sections, ifVersion: version)
                outcome = .sectioned(update, old: old, new: sections)
            default: throw session.holder.kindMismatch
            }
            // The holder now has the request's items alone.
            if commit { session.owners = collection.owners }
            return SessionChange(
                id: session.id, incarnation: session.incarnation, created: created, options: session.options, outcome: outcome, owners: owners)
        } catch {
            throw sessionError(error)
        }
    }

    static func append(
        _ session: OpenSession, _ collection: JSONCollection, condition: VersionCondition, maxItems: Int
    ) throws(SessionError) -> SessionChange {
        do {
            let version = try check(condition, against: session.holder.version)
            let owners = session.owners.merging(collection.owners)
            let outcome: SessionChange.Outcome
            switch (session.holder, collection.shape) {
            case (.flat(let data), .flat(var items)):
                let old = data.items
                try checkSize(old.count + items.count, limit: maxItems)
                if !session.options.unique {
                    var seen = occurrences(of: items, in: old)
                    numberOccurrences(&items, seen: &seen)
                }
                let update = try data.append(items, ifVersion: version)
                // The holder's list now, not another copy of it: the step lock keeps it the
                // one this append made.
                outcome = .flat(update, old: old, new: data.items)
            case (.sectioned(let data), .sectioned(var sections)):
                let old = data.sections
                try checkSize(old.itemCount + collection.itemCount, limit: maxItems)
                if !session.options.unique {
                    var seen = occurrences(of: sections.flatMap(\.items), in: old.flatMap(\.items))
                    for index in sections.indices { numberOccurrences(&sections[index].items, seen: &seen) }
                }
                let update = try data.append(sections, ifVersion: version)
                outcome = .sectioned(update, old: old, new: data.sections)
            default: throw session.holder.kindMismatch
            }
            // The holder keeps its items and gains the request's.
            session.owners = owners
            return SessionChange(
                id: session.id, incarnation: session.incarnation, created: false, options: session.options, outcome: outcome, owners: owners)
        } catch {
            throw sessionError(error)
        }
    }

    /// Works out an edit on the session as it is now, committing nothing: its condition first,
    /// then the edit, then the item limit.
    static func prepare(_ session: OpenSession, _ edit: SessionEdit, condition: VersionCondition, maxItems: Int) throws(SessionError) -> EditOutcome {
        _ = try check(condition, against: session.holder.version)
        let outcome: EditOutcome
        do throws(APIError) {
            outcome = try edit.apply(session.collection, session.options, maxItems)
        } catch {
            throw .refused(error)
        }
        try checkSize(outcome.itemCount, limit: maxItems)
        return outcome
    }

    /// Commits what `prepare` worked out, under the same step: an edit that says its own delta
    /// is committed with it; a new collection is diffed as an update would diff it.
    static func commit(_ session: OpenSession, _ outcome: EditOutcome) throws(SessionError) -> SessionChange {
        let base = session.holder.version
        let change: SessionChange.Outcome
        let owners: DocumentOwners
        var copied: [CopiedRun] = []
        do {
            switch (session.holder, outcome) {
            case (_, .collection(let collection)):
                return try update(session, to: collection, condition: .version(base), commit: true, created: false)
            case (.flat(let data), .flat(let items, let newOwners, let delta, let runs)):
                let old = data.items
                change = .flat(try data.commit(items, delta: delta, baseVersion: base), old: old, new: items)
                owners = newOwners
                copied = runs
            case (.sectioned(let data), .sectioned(let sections, let newOwners, let delta)):
                let old = data.sections
                change = .sectioned(try data.commit(sections, delta: delta, baseVersion: base), old: old, new: sections)
                owners = newOwners
            case (.sectioned, .flat):
                throw SessionError.internalFailure("an edit made a flat list of a sectioned session")
            case (.flat, .sectioned):
                throw SessionError.internalFailure("an edit made sections of a flat list")
            }
        } catch {
            // A SessionError passes through as it is; a holder's error is translated.
            throw sessionError(error)
        }
        session.owners = owners
        return SessionChange(
            id: session.id, incarnation: session.incarnation, created: false, options: session.options, outcome: change, owners: owners,
            copied: copied)
    }

    /// What refuses a change whatever it holds, checked before a store makes room for it (so
    /// that a change refused anyway evicts nobody): its condition, the collection's kind and,
    /// for an append, the items the session would hold. The same checks, in the same order,
    /// open `update` and `append`, which the caller runs next under the same step.
    static func precheck(
        _ session: OpenSession, _ collection: JSONCollection, condition: VersionCondition, appending: Bool, maxItems: Int
    ) throws(SessionError) {
        _ = try check(condition, against: session.holder.version)
        switch (session.holder, collection.shape) {
        case (.flat, .flat), (.sectioned, .sectioned): break
        default: throw session.holder.kindMismatch
        }
        if appending { try checkSize(session.holder.itemCount + collection.itemCount, limit: maxItems) }
    }

    /// The version a condition insists on, checked against the current one (taken inside the
    /// step, so that nothing changes it before the holder commits).
    static func check(_ condition: VersionCondition, against current: UInt64) throws(SessionError) -> UInt64? {
        switch condition {
        case .any, .exists: return nil
        case .version(let expected):
            guard expected == current else { throw .versionMismatch(expected: condition, current: current) }
            return expected
        case .anyOf(let versions):
            guard versions.contains(current) else { throw .versionMismatch(expected: condition, current: current) }
            return current
        }
    }

    static func checkSize(_ count: Int, limit: Int) throws(SessionError) {
        if count > limit { throw .tooManyItems(limit: limit, count: count) }
    }

    /// A holder for a collection, at `version` (0 for a new session).
    static func holder(for collection: JSONCollection, options: DiffOptions, version: UInt64 = 0) throws(SessionError) -> SessionCollection {
        do throws(DuplicateIdentifierError) {
            switch collection.shape {
            case .flat(let items): return .flat(try CollectionData(items, policy: options.sessionPolicy, version: version))
            case .sectioned(let sections): return .sectioned(try CollectionSectionData(sections, policy: options.sessionPolicy, version: version))
            }
        } catch {
            throw .duplicate(error)
        }
    }

    /// What the session holds now; the caller holds its `step`.
    static func snapshot(of session: OpenSession) -> SessionSnapshot {
        switch session.holder {
        case .flat(let data):
            let (items, version) = data.versionedItems
            return SessionSnapshot(
                id: session.id, incarnation: session.incarnation, options: session.options, version: version,
                collection: .flat(items, owners: session.owners))
        case .sectioned(let data):
            let (sections, version) = data.versionedSections
            return SessionSnapshot(
                id: session.id, incarnation: session.incarnation, options: session.options, version: version,
                collection: .sectioned(sections, owners: session.owners))
        }
    }

    /// How often each id of `items` occurs in `held`: the held items whose id hash lets them
    /// through a filter of those ids are the only ones looked at closely.
    private static func occurrences(of items: [JSONItem], in held: [JSONItem]) -> [JSONItemID: UInt32] {
        var seen = [JSONItemID: UInt32]()
        for item in items { seen[item.plainID] = 0 }
        let filter = IDHashFilter(items)
        for item in held where filter.mayHold(item) {
            let id = item.plainID
            if let count = seen[id] { seen[id] = count + 1 }
        }
        return seen
    }

    private static func sessionError(_ error: any Error) -> SessionError {
        switch error {
        case let error as SessionError: return error
        case CollectionDataError.duplicateIdentifier(let duplicate): return .duplicate(duplicate)
        case CollectionDataError.versionMismatch(let expected, let current): return .versionMismatch(expected: .version(expected), current: current)
        default: return .internalFailure("\(error)")
        }
    }
}
