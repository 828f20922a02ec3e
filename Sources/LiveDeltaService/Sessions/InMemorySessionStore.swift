import LiveCollections
import Logging
import Synchronization

import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Sessions in this process's memory: a `CollectionData` or `CollectionSectionData` each.
///
/// Every change to a session is one step under that session's own lock (`OpenSession.step`): read
/// the current state, check the condition and the limits, number occurrences, diff, commit.
/// So every figure in an answer comes from the same state, and each delta chains on the version
/// before it, while different sessions proceed in parallel. A shared store follows the same
/// shape with a compare-and-set on the version in place of the lock.
///
/// Bounded: at most `maxSessions`, taking at most `maxBytes` together (`SessionFootprint`;
/// when either is reached, the least recently used idle sessions are evicted, found from a
/// recency list), each idle for at most `idleTimeout`, each holding at most
/// `maxItemsPerSession` items. A session a request is using is never evicted or expired.
///
/// Tenants (the namespaces tokens give, `SessionNamespace`) are bounded apart as well, each to
/// `maxSessionsPerTenant` sessions and `maxBytesPerTenant` bytes, and a tenant that needs room
/// evicts only its own idle sessions, never another's: one tenant filling the store cannot
/// push out the rest. Without tokens there is one namespace, bounded by the store's limits.
/// Event callbacks and logs run after the store's lock is released.
package final class InMemorySessionStore: SessionStore {
    package struct Limits: Sendable {
        package var maxSessions = 10_000
        package var idleTimeout: Duration = .seconds(15 * 60)
        package var maxItemsPerSession = 100_000
        /// Bytes all sessions take together, as `SessionFootprint` counts them (mostly the
        /// request bodies their items point into, as sent).
        package var maxBytes = 1 << 30
        /// Sessions, and their bytes, of one tenant.
        package var maxSessionsPerTenant = 1_000
        package var maxBytesPerTenant = 256 << 20

        package init() {}
    }

    package let limits: Limits
    private struct Table: Sendable {
        var sessions: [String: OpenSession] = [:]
        /// Each namespace's sessions (`SessionNamespace.tenant`; "" without tokens).
        var tenants: [Substring: TenantSessions] = [:]
        /// The bytes the sessions in `sessions` hold (`OpenSession.countedBytes`, summed).
        var bytes = 0

        var held: Occupancy { Occupancy(open: sessions.count, bytes: bytes) }
    }

    /// One tenant's sessions: how many, their bytes, and their order of use, from which its
    /// least recently used idle sessions are evicted.
    private struct TenantSessions: Sendable {
        var count = 0
        var bytes = 0
        var recency = RecencyList<String>()
    }

    /// The namespace of a store key ("" where tokens are not checked), and whether the
    /// tenant quotas apply to it (they do to tenants' namespaces only).
    private static func tenant(of id: String) -> (name: Substring, quota: Bool) {
        guard let tenant = SessionNamespace.tenant(of: id) else { return ("", false) }
        return (tenant, true)
    }

    /// Whether `id`'s tenant has room for `added` more sessions and its bytes changed by
    /// `delta`; nil where it has, else the quota it would pass.
    private func tenantShort(_ table: Table, _ id: String, added: Int, delta: Int) -> SessionError? {
        let (name, quota) = Self.tenant(of: id)
        guard quota else { return nil }
        let tenant = table.tenants[name] ?? TenantSessions()
        if tenant.count + added > limits.maxSessionsPerTenant { return .tenantFull(limit: limits.maxSessionsPerTenant, bytes: false) }
        if tenant.bytes + delta > limits.maxBytesPerTenant { return .tenantFull(limit: limits.maxBytesPerTenant, bytes: true) }
        return nil
    }

    /// What the sessions take, for the gauges.
    private struct Occupancy {
        var open: Int
        var bytes: Int
    }

    private func tell(_ held: Occupancy) {
        events(.open(held.open))
        events(.bytes(held.bytes))
    }
    private let table = NIOLockedValueBox(Table())
    private let evicted = Atomic<Int>(0)
    private let expired = Atomic<Int>(0)
    private let logger: Logger
    private let events: @Sendable (SessionEvent) -> Void
    private let clock: @Sendable () -> UInt64
    private let observer = NIOLockedValueBox<(any SessionObserver)?>(nil)

    package func observe(with observer: any SessionObserver) {
        self.observer.withLockedValue { $0 = observer }
    }

    /// Tells the observer of a committed change; the caller holds the session's step, so
    /// changes are told in their order.
    private func told(_ change: SessionChange, by stored: OpenSession) -> SessionChange {
        if !stored.retired, let observer = observer.withLockedValue({ $0 }) { observer.committed(change) }
        return change
    }

    /// - Parameters:
    ///   - events: told of the number of sessions open, evictions and expiries, as they happen
    ///     (never while the store's lock is held).
    ///   - clock: monotonic nanoseconds (tests pass their own).
    package init(
        limits: Limits = Limits(), logger: Logger = Logger(label: "livedelta.sessions"),
        events: @escaping @Sendable (SessionEvent) -> Void = { _ in }, clock: (@Sendable () -> UInt64)? = nil
    ) {
        self.limits = limits
        self.logger = logger
        self.events = events
        self.clock =
            clock ?? {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
            }
    }

    package var statistics: SessionStatistics {
        SessionStatistics(
            open: table.withLockedValue { $0.sessions.count }, evicted: evicted.load(ordering: .relaxed), expired: expired.load(ordering: .relaxed))
    }

    /// The bytes the sessions take now, as `SessionFootprint` counts them: at most `limits.maxBytes`.
    package var heldBytes: Int { table.withLockedValue { $0.bytes } }

    private var idleNanoseconds: UInt64 {
        let (seconds, attoseconds) = limits.idleTimeout.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    // MARK: - SessionStore

    package func put(id: String, options: DiffOptions, collection: JSONCollection) throws(SessionError) -> (SessionSnapshot, created: Bool) {
        try SessionRules.checkSize(collection.itemCount, limit: limits.maxItemsPerSession)
        let bytes = SessionFootprint.of(collection)
        try checkBytes(bytes)
        let holder = try SessionRules.holder(for: collection, options: options)
        let stored = OpenSession(id: id, options: options, holder: holder, owners: collection.owners, now: clock())
        // Under the new session's step until observers are told, so that no change to it is
        // told before its creation; the session it replaces is retired first, once any change
        // it is in the middle of has been told.
        stored.step.lock()
        defer { stored.step.unlock() }
        let (_, created, replaced) = try insert(stored, replacing: true, bytes: bytes)
        defer { release(stored) }
        if let replaced {
            replaced.step.lock()
            replaced.retired = true
            replaced.step.unlock()
        }
        let snapshot = SessionSnapshot(id: id, incarnation: stored.incarnation, options: options, version: 0, collection: collection)
        observer.withLockedValue { $0 }?.replaced(snapshot)
        return (snapshot, created)
    }

    package func snapshot(id: String) throws(SessionError) -> SessionSnapshot {
        let stored = try use(id)
        defer { release(stored) }
        // Under the step: the items and the documents they point into are read as one.
        return try step(stored) { SessionRules.snapshot(of: stored) }
    }

    package func options(id: String) -> DiffOptions? {
        table.withLockedValue { $0.sessions[id]?.options }
    }

    package func update(
        id: String, to collection: JSONCollection, readWith: DiffOptions, condition: VersionCondition, commit: Bool
    ) throws(SessionError) -> SessionChange {
        try SessionRules.checkSize(collection.itemCount, limit: limits.maxItemsPerSession)
        var created = false
        let stored: OpenSession
        if let existing = acquire(id) {
            stored = existing
        } else {
            guard condition == .any else { throw .versionMismatch(expected: condition, current: nil) }
            guard commit else { throw .notFound(id: id) }
            let fresh = OpenSession(
                id: id, options: readWith, holder: try SessionRules.holder(for: collection.emptied, options: readWith), owners: DocumentOwners(),
                now: clock())
            // Another request may create it first; then this one updates that session. Either
            // way the session comes back in use, so it cannot be evicted before this step.
            (stored, created, _) = try insert(fresh, replacing: false, bytes: 0)
        }
        defer { release(stored) }
        guard stored.options.readsLike(readWith) else { throw .optionsChanged(stored.options) }
        return try step(stored) { () throws(SessionError) in
            guard commit else { return try SessionRules.update(stored, to: collection, condition: condition, commit: false, created: created) }
            try SessionRules.precheck(stored, collection, condition: condition, appending: false, maxItems: limits.maxItemsPerSession)
            // The session will hold the new body's bytes in place of its own.
            let change = try holding(stored, bytes: SessionFootprint.of(collection)) { () throws(SessionError) in
                try SessionRules.update(stored, to: collection, condition: condition, commit: true, created: created)
            }
            return told(change, by: stored)
        }
    }

    package func append(id: String, _ collection: JSONCollection, readWith: DiffOptions, condition: VersionCondition) throws(SessionError)
        -> SessionChange
    {
        guard let stored = acquire(id) else {
            if condition == .any { throw .notFound(id: id) }
            throw .versionMismatch(expected: condition, current: nil)
        }
        defer { release(stored) }
        guard stored.options.readsLike(readWith) else { throw .optionsChanged(stored.options) }
        return try step(stored) { () throws(SessionError) in
            try SessionRules.precheck(stored, collection, condition: condition, appending: true, maxItems: limits.maxItemsPerSession)
            // The session will hold the new body's bytes beside its own (a request's body is
            // never among a session's already, so the two are added without merging them).
            let bytes = SessionFootprint.of(stored.owners, items: stored.holder.itemCount) + SessionFootprint.of(collection)
            let change = try holding(stored, bytes: bytes) { () throws(SessionError) in
                try SessionRules.append(stored, collection, condition: condition, maxItems: limits.maxItemsPerSession)
            }
            return told(change, by: stored)
        }
    }

    package func edit(id: String, condition: VersionCondition, _ edit: SessionEdit) throws(SessionError) -> SessionChange {
        guard let stored = acquire(id) else {
            if condition == .any { throw .notFound(id: id) }
            throw .versionMismatch(expected: condition, current: nil)
        }
        defer { release(stored) }
        return try step(stored) { () throws(SessionError) in
            let outcome = try SessionRules.prepare(stored, edit, condition: condition, maxItems: limits.maxItemsPerSession)
            let change = try holding(stored, bytes: outcome.footprint) { () throws(SessionError) in
                try SessionRules.commit(stored, outcome)
            }
            return told(change, by: stored)
        }
    }

    package func delete(id: String, condition: VersionCondition) throws(SessionError) {
        guard let stored = acquire(id) else {
            if condition == .any { throw .notFound(id: id) }
            throw .versionMismatch(expected: condition, current: nil)
        }
        defer { release(stored) }
        let held = try step(stored) { () throws(SessionError) -> Occupancy? in
            _ = try SessionRules.check(condition, against: stored.holder.version)
            let held = table.withLockedValue { table -> Occupancy? in
                // Replaced meanwhile: the replacement is another session, and stays.
                guard table.sessions[id] === stored else { return nil }
                Self.remove(id, from: &table)
                return table.held
            }
            if held != nil {
                stored.retired = true
                observer.withLockedValue { $0 }?.ended(id: id, incarnation: stored.incarnation, reason: .deleted)
            }
            return held
        }
        guard let held else { throw .notFound(id: id) }
        tell(held)
    }

    /// Followed sessions that have expired go now, and their subscribers are told: a session
    /// nobody writes to or reads would otherwise expire only when next asked for, and its
    /// streams would never hear of it. The hub calls this about every ten seconds.
    package func follow(_ ids: [String]) {
        var dropped = Dropped()
        var held: Occupancy?
        table.withLockedValue { table in
            let now = clock()
            for id in ids {
                guard let stored = table.sessions[id], isExpired(stored, now: now) else { continue }
                Self.remove(id, from: &table)
                dropped.expired += 1
                dropped.ends.append((id, stored.incarnation, .expired))
            }
            if dropped.expired > 0 { held = table.held }
        }
        report(dropped)
        if let held { tell(held) }
    }

    // MARK: - One step on one session

    /// Runs a change as one step: no other change to the session runs meanwhile.
    private func step<T>(_ stored: OpenSession, _ body: () throws(SessionError) -> T) throws(SessionError) -> T {
        stored.step.lock()
        defer { stored.step.unlock() }
        return try body()
    }

    // MARK: - Bytes

    private func checkBytes(_ bytes: Int) throws(SessionError) {
        if bytes > limits.maxBytes { throw .tooLarge(limit: limits.maxBytes, bytes: bytes) }
    }

    /// Runs `change`, which leaves the session holding `bytes` where it succeeds. Room is made
    /// first (evicting idle sessions where the sessions would hold too much), so that a change
    /// that cannot fit fails before it commits, and the count follows the outcome. The caller
    /// holds the session's step lock.
    private func holding<T>(_ stored: OpenSession, bytes: Int, _ change: () throws(SessionError) -> T) throws(SessionError) -> T {
        try checkBytes(bytes)
        let before = try recount(stored, bytes: bytes, growing: true)
        do {
            let result = try change()
            _ = try? recount(stored, bytes: bytes, growing: false)
            return result
        } catch {
            _ = try? recount(stored, bytes: before, growing: false)
            throw error
        }
    }

    /// Counts `bytes` for the session and returns what it counted before. Growing, it may evict
    /// idle sessions to make room, and throws where it cannot; otherwise it only shrinks (never
    /// failing), keeping a larger count that a change in progress still needs. A session no
    /// longer in the table (replaced, deleted) counts nothing. The caller holds its step lock.
    private func recount(_ stored: OpenSession, bytes: Int, growing: Bool) throws(SessionError) -> Int {
        var dropped = Dropped()
        let outcome = table.withLockedValue { (table: inout Table) -> Result<(before: Int, held: Occupancy?), SessionError> in
            let before = stored.countedBytes
            guard table.sessions[stored.id] === stored, growing ? bytes > before : bytes < before else {
                return .success((before, nil))
            }
            if growing {
                let fits = { (table: Table) in
                    table.bytes - before + bytes <= self.limits.maxBytes && self.tenantShort(table, stored.id, added: 0, delta: bytes - before) == nil
                }
                dropped = dropIdle(from: &table, for: stored.id, now: clock(), until: fits)
                if let short = tenantShort(table, stored.id, added: 0, delta: bytes - before) { return .failure(short) }
                guard table.bytes - before + bytes <= limits.maxBytes else { return .failure(.bytesFull(limit: limits.maxBytes)) }
            }
            table.bytes += bytes - before
            table.tenants[Self.tenant(of: stored.id).name, default: TenantSessions()].bytes += bytes - before
            stored.countedBytes = bytes
            return .success((before, table.held))
        }
        report(dropped)
        let (before, held) = try outcome.get()
        if let held { tell(held) }
        return before
    }

    // MARK: - Bookkeeping

    /// Unused for longer than the idle timeout, and not in use. Another thread may have marked
    /// it used after `now` was read, so a last use later than `now` counts as fresh.
    private func isExpired(_ stored: OpenSession, now: UInt64) -> Bool {
        let lastUsed = stored.lastUsed.load(ordering: .relaxed)
        return stored.users.load(ordering: .relaxed) == 0 && now > lastUsed && now - lastUsed > idleNanoseconds
    }

    /// The session, marked in use; nil where there is none, or it has expired (then it goes).
    private func acquire(_ id: String) -> OpenSession? {
        var gone: (held: Occupancy, incarnation: String)?
        let stored = table.withLockedValue { table -> OpenSession? in
            let now = clock()
            guard let stored = table.sessions[id] else { return nil }
            if isExpired(stored, now: now) {
                Self.remove(id, from: &table)
                gone = (table.held, stored.incarnation)
                return nil
            }
            Self.markUsed(stored, now: now, in: &table)
            return stored
        }
        if let (held, incarnation) = gone {
            expired.add(1, ordering: .relaxed)
            events(.expired(1))
            tell(held)
            observer.withLockedValue { $0 }?.ended(id: id, incarnation: incarnation, reason: .expired)
        }
        return stored
    }

    private func use(_ id: String) throws(SessionError) -> OpenSession {
        guard let stored = acquire(id) else { throw .notFound(id: id) }
        return stored
    }

    private static func markUsed(_ stored: OpenSession, now: UInt64, in table: inout Table) {
        stored.users.add(1, ordering: .relaxed)
        stored.lastUsed.store(now, ordering: .relaxed)
        table.tenants[tenant(of: stored.id).name, default: TenantSessions()].recency.touch(stored.id)
    }

    private func release(_ stored: OpenSession) {
        stored.lastUsed.store(clock(), ordering: .relaxed)
        stored.users.subtract(1, ordering: .relaxed)
    }

    private static func remove(_ id: String, from table: inout Table) {
        guard let gone = table.sessions.removeValue(forKey: id) else { return }
        table.bytes -= gone.countedBytes
        let name = tenant(of: id).name
        guard var tenant = table.tenants[name] else { return }
        tenant.count -= 1
        tenant.bytes -= gone.countedBytes
        tenant.recency.remove(id)
        table.tenants[name] = tenant.count > 0 ? tenant : nil
    }

    /// Adds a session to the table and its tenant (the caller has made room).
    private static func add(_ stored: OpenSession, bytes: Int, to table: inout Table) {
        table.sessions[stored.id] = stored
        stored.countedBytes = bytes
        table.bytes += bytes
        let name = tenant(of: stored.id).name
        table.tenants[name, default: TenantSessions()].count += 1
        table.tenants[name, default: TenantSessions()].bytes += bytes
    }

    /// Sessions dropped to make room, reported once the table's lock is released.
    private struct Dropped {
        var expired = 0
        var evicted: [String] = []
        /// Every session dropped, with its life and why, for the observer.
        var ends: [(id: String, incarnation: String, reason: SessionEnd)] = []
    }

    /// From the least recently used end of `id`'s tenant, drops sessions until `fits`: expired
    /// ones, and idle ones (evicted). Sessions in use are skipped (there are at most as many as
    /// requests in flight), as is `id` itself, so this is O(1) per session dropped. Where that
    /// is not enough, other tenants' expired sessions go too, but never one that is live:
    /// one tenant's need never evicts another's.
    private func dropIdle(from table: inout Table, for id: String, now: UInt64, until fits: (Table) -> Bool) -> Dropped {
        var dropped = Dropped()
        let own = Self.tenant(of: id).name
        drop(from: &table, tenant: own, sparing: id, evicting: true, now: now, into: &dropped, until: fits)
        guard !fits(table) else { return dropped }
        for name in table.tenants.keys where name != own {
            drop(from: &table, tenant: name, sparing: id, evicting: false, now: now, into: &dropped, until: fits)
            if fits(table) { break }
        }
        return dropped
    }

    /// Walks one tenant's sessions from the least recently used, dropping expired ones and,
    /// where `evicting`, idle ones, until `fits`. Not evicting, it stops at the first session
    /// that has not expired: the ones after it were used later still.
    private func drop(
        from table: inout Table, tenant: Substring, sparing: String, evicting: Bool, now: UInt64, into dropped: inout Dropped,
        until fits: (Table) -> Bool
    ) {
        var candidate = table.tenants[tenant]?.recency.oldest
        while !fits(table), let id = candidate {
            candidate = table.tenants[tenant]?.recency.newer(than: id)
            guard id != sparing, let old = table.sessions[id], old.users.load(ordering: .relaxed) == 0 else { continue }
            if isExpired(old, now: now) {
                dropped.expired += 1
                dropped.ends.append((id, old.incarnation, .expired))
            } else if evicting {
                dropped.evicted.append(id)
                dropped.ends.append((id, old.incarnation, .evicted))
            } else {
                return
            }
            Self.remove(id, from: &table)
        }
    }

    /// Counts, events and a log line for each session dropped (outside the table's lock).
    private func report(_ dropped: Dropped) {
        if !dropped.ends.isEmpty, let observer = observer.withLockedValue({ $0 }) {
            for end in dropped.ends { observer.ended(id: end.id, incarnation: end.incarnation, reason: end.reason) }
        }
        if dropped.expired > 0 {
            expired.add(dropped.expired, ordering: .relaxed)
            events(.expired(dropped.expired))
        }
        for victim in dropped.evicted {
            events(.evicted)
            let total = evicted.add(1, ordering: .relaxed).newValue
            logger.notice(
                "session evicted",
                metadata: [
                    "session": "\(victim)", "evicted_total": .stringConvertible(total), "max_sessions": .stringConvertible(limits.maxSessions),
                    "max_bytes": .stringConvertible(limits.maxBytes),
                ])
        }
    }

    /// Adds a session holding `bytes`, making room by dropping expired ones, then the least
    /// recently used idle ones, and returns the session now under the id, marked in use (the
    /// caller releases it): `stored` and true where it was added, `stored` and false where it
    /// replaced one, the existing one and false where one with the id exists and `replacing` is
    /// false. Where no room can be made, the session is not added (idle sessions dropped while
    /// trying stay dropped, as they might have been anyway).
    private func insert(
        _ stored: OpenSession, replacing: Bool, bytes: Int
    ) throws(SessionError) -> (OpenSession, added: Bool, replaced: OpenSession?) {
        var dropped = Dropped()
        let outcome = table.withLockedValue { (table: inout Table) -> Result<((OpenSession, Bool, OpenSession?), Occupancy), SessionError> in
            let now = clock()
            // The session this one replaces: its place and bytes become this one's.
            var replaced: OpenSession?
            if let existing = table.sessions[stored.id] {
                if isExpired(existing, now: now) {
                    Self.remove(stored.id, from: &table)
                    dropped.expired += 1
                    dropped.ends.append((stored.id, existing.incarnation, .expired))
                } else if !replacing {
                    Self.markUsed(existing, now: now, in: &table)
                    return .success(((existing, false, nil), table.held))
                } else {
                    replaced = existing
                }
            }
            let added = replaced == nil ? 1 : 0
            let freed = replaced?.countedBytes ?? 0
            let maxSessions = limits.maxSessions, maxBytes = limits.maxBytes
            let roomForCount = { (table: Table) in table.sessions.count + added <= maxSessions }
            let roomForBytes = { (table: Table) in table.bytes - freed + bytes <= maxBytes }
            let roomInTenant = { (table: Table) in self.tenantShort(table, stored.id, added: added, delta: bytes - freed) == nil }
            let more = dropIdle(from: &table, for: stored.id, now: now) { roomForCount($0) && roomForBytes($0) && roomInTenant($0) }
            dropped.expired += more.expired
            dropped.evicted += more.evicted
            // Every session dropped is owed an end to its subscribers, whatever dropped it.
            dropped.ends += more.ends
            if let short = tenantShort(table, stored.id, added: added, delta: bytes - freed) { return .failure(short) }
            guard roomForCount(table) else { return .failure(.storeFull(limit: maxSessions)) }
            guard roomForBytes(table) else { return .failure(.bytesFull(limit: maxBytes)) }
            if replaced != nil { Self.remove(stored.id, from: &table) }
            Self.add(stored, bytes: bytes, to: &table)
            Self.markUsed(stored, now: now, in: &table)
            return .success(((stored, replaced == nil, replaced), table.held))
        }
        report(dropped)
        let (result, held) = try outcome.get()
        tell(held)
        return result
    }
}
