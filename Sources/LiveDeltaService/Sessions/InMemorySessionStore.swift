import LiveCollections
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Sessions in this process's memory: a `CollectionData` or `CollectionSectionData` each,
/// which serializes a session's updates (each delta chains on the version before it) while
/// different sessions proceed in parallel.
///
/// Bounded: at most `maxSessions` (when full, the least recently used idle session is evicted),
/// each idle for at most `idleTimeout`, each holding at most `maxItemsPerSession` items.
public final class InMemorySessionStore: SessionStore {
    public struct Limits: Sendable {
        public var maxSessions = 10_000
        public var idleTimeout: Duration = .seconds(15 * 60)
        public var maxItemsPerSession = 100_000

        public init() {}
    }

    enum Holder: Sendable {
        case flat(CollectionData<JSONItem>)
        case sectioned(CollectionSectionData<JSONSection>)

        var version: UInt64 {
            switch self {
            case .flat(let data): data.version
            case .sectioned(let data): data.version
            }
        }
    }

    final class Stored: Sendable {
        let id: String
        let options: DiffOptions
        let holder: Holder
        /// Monotonic nanoseconds of the last use.
        let lastUsed: Atomic<UInt64>
        /// Operations in progress: such a session is not idle, so not evicted or expired.
        let users = Atomic<Int>(0)

        init(id: String, options: DiffOptions, holder: Holder, now: UInt64) {
            self.id = id
            self.options = options
            self.holder = holder
            lastUsed = Atomic(now)
        }
    }

    public let limits: Limits
    private let sessions = Mutex<[String: Stored]>([:])
    private let evicted = Atomic<Int>(0)
    private let expired = Atomic<Int>(0)
    private let logger: Logger
    private let events: @Sendable (SessionEvent) -> Void
    private let clock: @Sendable () -> UInt64

    /// - Parameters:
    ///   - events: told of the number of sessions open, evictions and expiries, as they happen.
    ///   - clock: monotonic nanoseconds (tests pass their own).
    public init(
        limits: Limits = Limits(), logger: Logger = Logger(label: "livedelta.sessions"),
        events: @escaping @Sendable (SessionEvent) -> Void = { _ in }, clock: (@Sendable () -> UInt64)? = nil
    ) {
        self.limits = limits
        self.logger = logger
        self.events = events
        self.clock = clock ?? {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
        }
    }

    public var statistics: SessionStatistics {
        SessionStatistics(
            open: sessions.withLock { $0.count }, evicted: evicted.load(ordering: .relaxed), expired: expired.load(ordering: .relaxed))
    }

    private var idleNanoseconds: UInt64 {
        let (seconds, attoseconds) = limits.idleTimeout.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    // MARK: - SessionStore

    public func put(id: String, options: DiffOptions, collection: JSONCollection) throws(SessionError) -> (SessionSnapshot, created: Bool) {
        try checkSize(collection.itemCount)
        let holder = try Self.holder(for: collection, options: options)
        let stored = Stored(id: id, options: options, holder: holder, now: clock())
        let created = try insert(stored, replacing: true)
        return (SessionSnapshot(id: id, options: options, version: 0, collection: collection), created)
    }

    public func snapshot(id: String) throws(SessionError) -> SessionSnapshot {
        let stored = try use(id)
        defer { release(stored) }
        return Self.snapshot(of: stored)
    }

    public func options(id: String) -> DiffOptions? {
        sessions.withLock { $0[id]?.options }
    }

    public func update(
        id: String, to collection: JSONCollection, readWith: DiffOptions, condition: VersionCondition, commit: Bool
    ) throws(SessionError) -> SessionChange {
        try checkSize(collection.itemCount)
        var created = false
        let stored: Stored
        if let existing = acquire(id) {
            stored = existing
        } else {
            guard condition == .any else { throw .versionMismatch(expected: condition, current: nil) }
            guard commit else { throw .notFound(id: id) }
            let empty: JSONCollection = if case .sectioned = collection { .sectioned([]) } else { .flat([]) }
            let fresh = Stored(id: id, options: readWith, holder: try Self.holder(for: empty, options: readWith), now: clock())
            // Another request may create it first; then this one updates that session.
            created = try insert(fresh, replacing: false)
            stored = try use(id)
        }
        defer { release(stored) }
        guard stored.options.readsLike(readWith) else { throw .optionsChanged(stored.options) }
        let version: UInt64? = if case .version(let number) = condition { number } else { nil }
        do {
            switch (stored.holder, collection) {
            case (.flat(let data), .flat(let items)):
                let old = data.count
                let update = commit ? try data.update(items, ifVersion: version) : try data.calculateDelta(items, ifVersion: version)
                return SessionChange(id: id, created: created, options: stored.options, outcome: .flat(update, oldCount: old, newCount: items.count))
            case (.sectioned(let data), .sectioned(let sections)):
                let old = data.sections
                let update = commit ? try data.update(sections, ifVersion: version) : try data.calculateDelta(sections, ifVersion: version)
                return SessionChange(id: id, created: created, options: stored.options, outcome: .sectioned(update, old: old, new: sections))
            case (.flat, _): throw SessionError.kindMismatch(sessionIsSectioned: false)
            case (.sectioned, _): throw SessionError.kindMismatch(sessionIsSectioned: true)
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    public func append(id: String, _ collection: JSONCollection, readWith: DiffOptions, condition: VersionCondition) throws(SessionError) -> SessionChange {
        guard let stored = acquire(id) else {
            if condition == .any { throw .notFound(id: id) }
            throw .versionMismatch(expected: condition, current: nil)
        }
        defer { release(stored) }
        guard stored.options.readsLike(readWith) else { throw .optionsChanged(stored.options) }
        let version: UInt64? = if case .version(let number) = condition { number } else { nil }
        do {
            switch (stored.holder, collection) {
            case (.flat(let data), .flat(var items)):
                try checkSize(data.count + items.count)
                if !stored.options.unique {
                    var seen = Self.occurrences(data.items)
                    numberOccurrences(&items, seen: &seen)
                }
                let old = data.count
                let update = try data.append(items, ifVersion: version)
                return SessionChange(id: id, created: false, options: stored.options, outcome: .flat(update, oldCount: old, newCount: old + items.count))
            case (.sectioned(let data), .sectioned(var sections)):
                try checkSize(data.count + collection.itemCount)
                if !stored.options.unique {
                    var seen = Self.occurrences(data.sections.flatMap(\.items))
                    for index in sections.indices { numberOccurrences(&sections[index].items, seen: &seen) }
                }
                let old = data.sections
                let update = try data.append(sections, ifVersion: version)
                return SessionChange(id: id, created: false, options: stored.options, outcome: .sectioned(update, old: old, new: old + sections))
            case (.flat, _): throw SessionError.kindMismatch(sessionIsSectioned: false)
            case (.sectioned, _): throw SessionError.kindMismatch(sessionIsSectioned: true)
            }
        } catch {
            throw Self.sessionError(error)
        }
    }

    public func delete(id: String, condition: VersionCondition) throws(SessionError) {
        try sessions.withLock { (sessions: inout [String: Stored]) throws(SessionError) in
            let now = clock()
            guard let stored = sessions[id], !isExpired(stored, now: now) else {
                if condition == .any { throw .notFound(id: id) }
                throw .versionMismatch(expected: condition, current: nil)
            }
            if case .version(let expected) = condition, expected != stored.holder.version {
                throw .versionMismatch(expected: condition, current: stored.holder.version)
            }
            sessions[id] = nil
            events(.open(sessions.count))
        }
    }

    // MARK: - Bookkeeping

    private func checkSize(_ count: Int) throws(SessionError) {
        if count > limits.maxItemsPerSession { throw .tooManyItems(limit: limits.maxItemsPerSession, count: count) }
    }

    /// Unused for longer than the idle timeout. Another thread may have marked it used after
    /// `now` was read, so a last use later than `now` counts as fresh.
    private func isExpired(_ stored: Stored, now: UInt64) -> Bool {
        let lastUsed = stored.lastUsed.load(ordering: .relaxed)
        return stored.users.load(ordering: .relaxed) == 0 && now > lastUsed && now - lastUsed > idleNanoseconds
    }

    /// The session, marked in use; nil where there is none, or it has expired (then it goes).
    private func acquire(_ id: String) -> Stored? {
        sessions.withLock { sessions in
            let now = clock()
            guard let stored = sessions[id] else { return nil }
            if isExpired(stored, now: now) {
                sessions[id] = nil
                expired.add(1, ordering: .relaxed)
                events(.expired(1))
                events(.open(sessions.count))
                return nil
            }
            stored.users.add(1, ordering: .relaxed)
            stored.lastUsed.store(now, ordering: .relaxed)
            return stored
        }
    }

    private func use(_ id: String) throws(SessionError) -> Stored {
        guard let stored = acquire(id) else { throw .notFound(id: id) }
        return stored
    }

    private func release(_ stored: Stored) {
        stored.lastUsed.store(clock(), ordering: .relaxed)
        stored.users.subtract(1, ordering: .relaxed)
    }

    /// Adds a session, making room by dropping expired ones, then the least recently used idle
    /// one. Returns whether it was added (false: one with the id exists and is kept).
    private func insert(_ stored: Stored, replacing: Bool) throws(SessionError) -> Bool {
        var victim: String?
        let added = try sessions.withLock { (sessions: inout [String: Stored]) throws(SessionError) -> Bool in
            let now = clock()
            if let existing = sessions[stored.id], !isExpired(existing, now: now) {
                if replacing { sessions[stored.id] = stored }
                return false
            }
            if sessions.count >= limits.maxSessions {
                let gone = sessions.filter { isExpired($0.value, now: now) }.map(\.key)
                for id in gone { sessions[id] = nil }
                expired.add(gone.count, ordering: .relaxed)
                if !gone.isEmpty { events(.expired(gone.count)) }
            }
            if sessions.count >= limits.maxSessions {
                let idle = sessions.values.filter { $0.users.load(ordering: .relaxed) == 0 }
                guard let oldest = idle.min(by: { $0.lastUsed.load(ordering: .relaxed) < $1.lastUsed.load(ordering: .relaxed) }) else {
                    throw .storeFull(limit: limits.maxSessions)
                }
                sessions[oldest.id] = nil
                victim = oldest.id
            }
            sessions[stored.id] = stored
            events(.open(sessions.count))
            return true
        }
        if let victim {
            events(.evicted)
            let total = evicted.add(1, ordering: .relaxed).newValue
            logger.notice("session evicted", metadata: ["session": "\(victim)", "evicted_total": "\(total)", "max_sessions": "\(limits.maxSessions)"])
        }
        return added
    }

    private static func holder(for collection: JSONCollection, options: DiffOptions) throws(SessionError) -> Holder {
        do throws(DuplicateIdentifierError) {
            switch collection {
            case .flat(let items): return .flat(try CollectionData(items, policy: options.policy))
            case .sectioned(let sections): return .sectioned(try CollectionSectionData(sections, policy: options.policy))
            }
        } catch {
            throw .duplicate(error)
        }
    }

    private static func snapshot(of stored: Stored) -> SessionSnapshot {
        switch stored.holder {
        case .flat(let data):
            let (items, version) = data.versionedItems
            return SessionSnapshot(id: stored.id, options: stored.options, version: version, collection: .flat(items))
        case .sectioned(let data):
            let (sections, version) = data.versionedSections
            return SessionSnapshot(id: stored.id, options: stored.options, version: version, collection: .sectioned(sections))
        }
    }

    private static func occurrences(_ items: [JSONItem]) -> [JSONItemID: UInt32] {
        var seen = [JSONItemID: UInt32]()
        for item in items { seen[item.plainID, default: 0] += 1 }
        return seen
    }

    private static func sessionError(_ error: any Error) -> SessionError {
        switch error {
        case let error as SessionError: return error
        case CollectionDataError.duplicateIdentifier(let duplicate): return .duplicate(duplicate)
        case CollectionDataError.versionMismatch(let expected, let current): return .versionMismatch(expected: .version(expected), current: current)
        default: preconditionFailure("unexpected \(error)")
        }
    }
}
