import ByteJSON
import Glibc
import LiveDeltaService
import Logging
import MicroHTTP
import NIOConcurrencyHelpers

/// Sessions fed by PostgreSQL queries (`SessionSources`). One thread listens on the sources'
/// channels; a notification is a hint, never data: the sessions of a source notified are
/// evaluated again once its debounce has passed, and a result that differs from the last is
/// committed as the next version (an unchanged one commits nothing). After a lost connection
/// every session is evaluated again once connected, as notifications sent meanwhile are lost.
///
/// Which sessions are fed is kept by `leases`, where every replica sees it; each replica
/// evaluates the sessions whose lease it holds, and takes over those whose replica died.
package final class PostgresSources: SessionSources {
    private let definitions: [String: SourceDefinition]
    private let conninfo: String
    private let store: any SessionStore
    private let leases: any SourceLeases
    private let maxItems: Int
    private let logger: Logger
    private let metrics: ServiceMetrics?
    /// Evaluations and their commits, one at a time: a session created while its source is
    /// evaluated again is never committed to from the older binding.
    private let work: NIOLockedValueBox<Querying>
    private let state = NIOLockedValueBox(State())
    private let thread = NIOLockedValueBox<pthread_t?>(nil)
    private let problemsTold = NIOLockedValueBox<(@Sendable (String, [UInt8]) -> Void)?>(nil)

    /// The connection queries run on, made (and its statements prepared) when first needed.
    private struct Querying: @unchecked Sendable {  // used under `work`'s lock only
        var connection: PostgresConnection?
    }

    private struct State {
        /// The sessions whose lease this replica holds.
        var bindings: [String: SourceBinding] = [:]
        /// Sessions to evaluate now, whatever their source's schedule (taken over).
        var pending: Set<String> = []
        /// By source: when its notified sessions are due to be evaluated.
        var due: [String: ContinuousClock.Instant] = [:]
        var nextRefresh: [String: ContinuousClock.Instant] = [:]
        /// By source: notifications taken, so that a session read before one and bound after
        /// it is evaluated again.
        var notified: [String: UInt64] = [:]
        var connected = false
        var leasesReachable = true
        /// The problems last told (`tellProblems`), by session: the status and the source.
        var told: [String: (status: [UInt8], source: String)] = [:]
        var stopping = false
    }

    /// What `read` hands the service, and `bind` takes back.
    private struct Read: Sendable {
        let parameters: [String?]
        let digest: [UInt64]
        let notified: UInt64
    }

    /// Connects, prepares every source's query (which fails as PostgreSQL would run it: a
    /// syntax error, a missing table, a permission) and starts listening. Throws naming the
    /// source and what PostgreSQL said.
    package init(
        file: [UInt8], conninfo: String, store: any SessionStore, leases: any SourceLeases = LocalSourceLeases(), maxItems: Int,
        metrics: ServiceMetrics? = nil, logger: Logger
    ) throws(SourceStartError) {
        let definitions: [SourceDefinition]
        do {
            definitions = try SourceDefinition.read(file)
        } catch {
            throw SourceStartError(description: error.description)
        }
        self.definitions = Dictionary(uniqueKeysWithValues: definitions.map { ($0.name, $0) })
        self.conninfo = conninfo
        self.store = store
        self.leases = leases
        self.maxItems = maxItems
        self.metrics = metrics
        self.logger = logger
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(conninfo)
        } catch {
            throw SourceStartError(description: "cannot connect to PostgreSQL: \(error)")
        }
        for definition in definitions {
            let count: Int
            do {
                count = try connection.prepare(definition.statement, definition.query)
            } catch {
                throw SourceStartError(description: "source \(definition.name): its query fails: \(error)")
            }
            guard count == definition.parameters.count else {
                throw SourceStartError(
                    description:
                        "source \(definition.name): its query takes \(count) parameters and \"parameters\" declares \(definition.parameters.count)")
            }
            for channel in definition.channels {
                do {
                    try connection.execute("LISTEN \(try connection.identifier(channel))")
                } catch {
                    throw SourceStartError(description: "source \(definition.name): cannot LISTEN on \(channel): \(error)")
                }
            }
        }
        try? connection.execute("UNLISTEN *")
        work = NIOLockedValueBox(Querying(connection: connection))
        let now = ContinuousClock.now
        state.withLockedValue { state in
            for definition in definitions { if let refresh = definition.refresh { state.nextRefresh[definition.name] = now + refresh } }
        }
        let started = startThread { [self] in
            ThreadPool.nameThread("pg-sources")
            listen()
        }
        thread.withLockedValue { $0 = started }
    }

    package var names: [String] { definitions.keys.sorted() }

    // MARK: - SessionSources

    package func read(source: String, params: [String: String], tenant: String?) throws(APIError) -> SourceRows {
        guard let definition = definitions[source] else {
            var error = APIError(
                .unknownSource,
                message: "there is no source \(source) on this server; its sources: \(definitions.keys.sorted().joined(separator: ", "))")
            error.details = [("source", .string(source))]
            throw error
        }
        let parameters = try Self.bind(definition, params, tenant: tenant)
        let notified = state.withLockedValue { $0.notified[source, default: 0] }
        let evaluated = work.withLockedValue { querying in
            Result { () throws(APIError) in try evaluate(definition, parameters, on: &querying) }
        }
        let (collection, digest) = try evaluated.get()
        return SourceRows(
            source: source, collection: collection, options: definition.options,
            binding: Read(parameters: parameters, digest: digest, notified: notified))
    }

    package func bind(_ id: String, _ rows: SourceRows, version: UInt64) throws(APIError) {
        guard let definition = definitions[rows.source], let read = rows.binding as? Read else { return }
        let binding = SourceBinding(source: definition, parameters: read.parameters, version: version, digest: read.digest)
        do {
            try leases.bind(id, record: binding.record)
        } catch {
            throw Self.unreachable(error)
        }
        state.withLockedValue { state in
            state.bindings[id] = binding
            // Notified since it was read: its rows may be older than the table.
            if state.notified[definition.name, default: 0] != read.notified {
                state.due[definition.name] = state.due[definition.name] ?? .now
            }
        }
    }

    package func source(feeding id: String) throws(APIError) -> String? {
        // Asked of the leases, not of this replica's bindings: another replica may feed it.
        let record: [UInt8]?
        do {
            record = try leases.record(of: id)
        } catch {
            throw Self.unreachable(error)
        }
        return record.map { SourceBinding.source(of: $0) ?? "(declared on another replica)" }
    }

    package func release(_ id: String) {
        leases.unbind(id, record: nil)
        _ = state.withLockedValue { $0.bindings.removeValue(forKey: id) }
    }

    package func status(of id: String) throws(APIError) -> [UInt8]? {
        do {
            guard let record = try leases.record(of: id) else { return nil }
            let source = SourceBinding.source(of: record) ?? "(declared on another replica)"
            return try leases.problem(of: id) ?? Self.status(source, problem: nil)
        } catch {
            throw Self.unreachable(error)
        }
    }

    package func tellProblems(_ tell: @escaping @Sendable (String, [UInt8]) -> Void) {
        problemsTold.withLockedValue { $0 = tell }
    }

    /// `{"name": source, "problem": {"code", "message"} or null}`.
    private static func status(_ source: String, problem: APIError?) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("name")
        writer.string(source)
        writer.raw(",")
        writer.key("problem")
        if let problem {
            writer.raw("{")
            writer.key("code")
            writer.string(problem.code.rawValue)
            writer.raw(",")
            writer.key("message")
            writer.string(problem.message)
            writer.raw("}}")
        } else {
            writer.raw("null}")
        }
        return writer.bytes
    }

    private static func unreachable(_ error: SourceLeaseError) -> APIError {
        var refusal = APIError(.sessionStoreUnavailable, message: "which sessions sources feed cannot be read now: \(error)")
        refusal.headers = [("Retry-After", "1")]
        return refusal
    }

    package var isReady: Bool { state.withLockedValue { $0.connected } }

    package func stop() {
        state.withLockedValue { $0.stopping = true }
        if let started = thread.withLockedValue({ $0.take() }) { pthread_join(started, nil) }
    }

    // MARK: - Evaluating

    /// The values of `$1`, `$2`…: the request's, checked by their patterns, and the token's tenant.
    private static func bind(_ definition: SourceDefinition, _ params: [String: String], tenant: String?) throws(APIError) -> [String?] {
        var values: [String?] = []
        var named: Set<String> = []
        for parameter in definition.parameters {
            switch parameter {
            case .tenant:
                guard let tenant, !tenant.isEmpty else {
                    throw APIError(
                        .invalidParameter,
                        message: "source \(definition.name) reads the rows of the token's tenant: call it with a token that names a tenant")
                }
                values.append(tenant)
            case .request(let name, let pattern):
                named.insert(name)
                guard let value = params[name] else {
                    throw .invalidParameter("params.\(name)", "source \(definition.name) needs params.\(name) (matching \(pattern))")
                }
                guard (try? Regex(pattern).wholeMatch(in: value)) != nil else {
                    throw .invalidParameter("params.\(name)", "params.\(name) of source \(definition.name) must match \(pattern) whole")
                }
                values.append(value)
            }
        }
        if let unknown = params.keys.sorted().first(where: { !named.contains($0) }) {
            let known = named.sorted().joined(separator: ", ")
            throw .invalidParameter(
                "params.\(unknown)", "source \(definition.name) takes no parameter \(unknown)" + (known.isEmpty ? "" : "; it takes \(known)"))
        }
        return values
    }

    /// The source's rows now, as a collection, and a digest of their text.
    private func evaluate(
        _ definition: SourceDefinition, _ parameters: [String?], on querying: inout Querying
    ) throws(APIError) -> (JSONCollection, [UInt64]) {
        let rows: PostgresRows
        do {
            rows = try query(definition, parameters, on: &querying)
        } catch {
            var refusal = APIError(.sourceUnavailable, message: "source \(definition.name) could not be read from PostgreSQL: \(error)")
            refusal.headers = [("Retry-After", "1")]
            throw refusal
        }
        defer { rows.close() }
        guard rows.count <= maxItems else {
            throw APIError(
                .sourceResultRefused,
                message: "source \(definition.name) answered \(rows.count) rows; a session holds at most \(maxItems) (--max-session-items)")
        }
        let text: [UInt8]
        do {
            text = try RowJSON.collection(rows, key: definition.key, section: definition.section)
        } catch {
            throw APIError(.sourceResultRefused, message: "source \(definition.name) answered rows that make no list: \(error.description)")
        }
        let collection: JSONCollection
        do {
            collection = try CollectionDocument.read(
                ByteBuffer(text), options: definition.options, limits: ReadLimits(maxDepth: 512, maxItems: maxItems))
        } catch {
            throw APIError(
                .sourceResultRefused,
                message: "source \(definition.name) answered rows that make no collection (key column \(definition.key)): \(error.message)")
        }
        var first = Hasher()
        first.combine(0)
        var second = Hasher()
        second.combine(1)
        text.withUnsafeBytes {
            first.combine(bytes: $0)
            second.combine(bytes: $0)
        }
        return (collection, [UInt64(bitPattern: Int64(first.finalize())), UInt64(bitPattern: Int64(second.finalize())), UInt64(text.count)])
    }

    /// Runs the source's query; where the connection it ran on had broken (PostgreSQL
    /// restarted since), once more on a new one.
    private func query(_ definition: SourceDefinition, _ parameters: [String?], on querying: inout Querying) throws(PostgresError) -> PostgresRows {
        var attempt = 0
        while true {
            attempt += 1
            let connection: PostgresConnection
            if let held = querying.connection { connection = held } else { connection = try connect() }
            querying.connection = connection
            do throws(PostgresError) {
                return try connection.execute(prepared: definition.statement, parameters)
            } catch {
                guard !connection.isOpen else { throw error }
                querying.connection = nil
                if attempt == 2 { throw error }
            }
        }
    }

    /// A connection with every source's statement prepared.
    private func connect() throws(PostgresError) -> PostgresConnection {
        let connection = try PostgresConnection(conninfo)
        for definition in definitions.values { _ = try connection.prepare(definition.statement, definition.query) }
        return connection
    }

    /// Evaluates sessions again, once for each source and parameters however many sessions
    /// share them, and commits each session's result where it changed.
    private func refresh(_ ids: [String]) {
        let bindings = state.withLockedValue { state in ids.compactMap { id in state.bindings[id].map { (id, $0) } } }
        var groups: [SourceBinding.Query: [(String, SourceBinding)]] = [:]
        for (id, binding) in bindings { groups[binding.query, default: []].append((id, binding)) }
        for group in groups.values {
            if state.withLockedValue({ $0.stopping }) { return }
            work.withLockedValue { querying in refresh(group, on: &querying) }
        }
    }

    /// Evaluates the sessions of one source and parameters, and commits to each where its
    /// rows changed.
    private func refresh(_ group: [(String, SourceBinding)], on querying: inout Querying) {
        guard let source = group.first?.1.source, let parameters = group.first?.1.parameters else { return }
        let evaluated: (JSONCollection, [UInt64])
        do throws(APIError) {
            evaluated = try evaluate(source, parameters, on: &querying)
        } catch {
            logger.warning(
                "source result not committed; the sessions keep their versions",
                metadata: ["source": "\(source.name)", "session": "\(group[0].0)", "sessions": "\(group.count)", "error": "\(error.message)"])
            let unavailable = error.code == .sourceUnavailable
            for (id, binding) in group {
                metrics?.sourceEvaluated(source.name, unavailable ? .unavailable : .refused)
                report(id, binding, error)
            }
            if unavailable {
                // PostgreSQL could not be asked: again in a second, until it can.
                state.withLockedValue { state in state.due[source.name] = state.due[source.name] ?? .now + .seconds(1) }
            }
            return
        }
        for (id, binding) in group {
            report(id, binding, nil)
            commit(id, binding, evaluated)
        }
    }

    /// Commits the rows a session's source answered, where they differ from what it holds.
    private func commit(_ id: String, _ binding: SourceBinding, _ evaluated: (JSONCollection, [UInt64])) {
        var binding = binding
        do throws(SessionError) {
            if binding.version == nil {
                // Taken over: what the session holds is known once read.
                let (version, changed) = try held(id, binding, evaluated.0)
                guard changed else {
                    settle(id, binding, version: version, digest: evaluated.1)
                    metrics?.sourceEvaluated(binding.source.name, .unchanged)
                    return
                }
                binding.version = version
            } else if evaluated.1 == binding.digest {
                metrics?.sourceEvaluated(binding.source.name, .unchanged)
                return
            }
            let change = try store.update(
                id: id, to: evaluated.0, readWith: binding.source.options, condition: .version(binding.version ?? 0), commit: true)
            settle(id, binding, version: change.version, digest: evaluated.1)
            metrics?.sourceEvaluated(binding.source.name, .committed)
        } catch {
            lost(id, binding, error)
        }
    }

    /// Keeps why the session's source's result was not committed (nil: it was, or was the
    /// same), where that differs from what was kept last; where it cannot be kept now, the
    /// next evaluation tries again.
    private func report(_ id: String, _ binding: SourceBinding, _ problem: APIError?) {
        let status = problem.map { Self.status(binding.source.name, problem: $0) }
        guard status != binding.problem, (try? leases.report(id, problem: status)) != nil else { return }
        state.withLockedValue { state in
            if state.bindings[id]?.record == binding.record { state.bindings[id]?.problem = status }
        }
    }

    /// Tells of the problems that came or went since the last call, from any replica.
    private func tellProblems() {
        guard let tell = problemsTold.withLockedValue({ $0 }), let problems = try? leases.problems() else { return }
        let changed = state.withLockedValue { state in
            var changed: [(String, [UInt8])] = []
            for (id, status) in problems where state.told[id]?.status != status {
                let source = (try? status.withUnsafeBufferPointer { bytes throws(JSONError) in try JSONValue(parsing: bytes) })?["name"]?.stringValue
                state.told[id] = (status, source ?? "")
                changed.append((id, status))
            }
            for (id, told) in state.told where problems[id] == nil {
                state.told[id] = nil
                changed.append((id, Self.status(told.source, problem: nil)))
            }
            return changed
        }
        for (id, status) in changed { tell(id, status) }
    }

    /// Session `id` holds `digest`'s rows at `version`, where it is still `binding`'s.
    private func settle(_ id: String, _ binding: SourceBinding, version: UInt64, digest: [UInt64]) {
        state.withLockedValue { state in
            guard state.bindings[id]?.record == binding.record else { return }
            state.bindings[id]?.version = version
            state.bindings[id]?.digest = digest
        }
    }

    /// The version of a session taken over, and whether `rows` differ from what it holds.
    private func held(_ id: String, _ binding: SourceBinding, _ rows: JSONCollection) throws(SessionError) -> (UInt64, changed: Bool) {
        let snapshot = try store.snapshot(id: id)
        // Replaced over HTTP on another replica since it was taken: no longer fed.
        guard (try? leases.record(of: id)) == binding.record else { throw .versionMismatch(expected: .version(snapshot.version), current: nil) }
        let dry = try store.update(id: id, to: rows, readWith: binding.source.options, condition: .version(snapshot.version), commit: false)
        let changes: Bool
        switch dry.outcome {
        case .flat(let update, _, _): changes = update.delta?.hasChanges ?? true
        case .sectioned(let update, _, _): changes = update.sectionDelta?.hasChanges ?? true || update.itemDelta?.hasChanges ?? true
        }
        return (snapshot.version, changes)
    }

    /// A commit the store refused: a session gone takes its binding with it; one whose version
    /// moved on (replaced over HTTP, or fed by a replica that took it over while this one was
    /// paused) is read again where it is still this binding's, and left alone where not.
    private func lost(_ id: String, _ binding: SourceBinding, _ error: SessionError) {
        metrics?.sourceEvaluated(binding.source.name, .refused)
        switch error {
        case .notFound:
            leases.unbind(id, record: binding.record)
            state.withLockedValue { state in
                if state.bindings[id]?.record == binding.record { state.bindings[id] = nil }
            }
        case .versionMismatch:
            let still = (try? leases.record(of: id)) == binding.record
            state.withLockedValue { state in
                guard state.bindings[id]?.record == binding.record else { return }
                if still {
                    state.bindings[id]?.version = nil
                    state.pending.insert(id)
                } else {
                    state.bindings[id] = nil
                }
            }
        default:
            logger.warning(
                "source result not committed; the session keeps its version",
                metadata: ["source": "\(binding.source.name)", "session": "\(id)", "error": "\(error)"])
        }
    }

    // MARK: - Listening

    private func listen() {
        var listener: PostgresConnection?
        var retry = ContinuousClock.now
        var backoff = Duration.seconds(1)
        var renewal = ContinuousClock.now
        while !state.withLockedValue({ $0.stopping }) {
            let now = ContinuousClock.now
            if now >= renewal {
                renewLeases()
                renewal = now + leases.renewal
            }
            if listener == nil, now >= retry {
                do {
                    listener = try listening()
                    backoff = .seconds(1)
                    let wasDown = state.withLockedValue { state in
                        defer { state.connected = true }
                        return !state.connected
                    }
                    if wasDown { logger.notice("PostgreSQL connected: the sources' changes are followed") }
                    metrics?.sources(connected: true)
                    // Notifications sent while it was not listening are lost: every session again.
                    refresh(state.withLockedValue { Array($0.bindings.keys) })
                } catch {
                    disconnected(error)
                    retry = now + backoff
                    backoff = min(backoff * 2, .seconds(30))
                }
            }
            let wait = min(nextDue() - .now, renewal - .now, .milliseconds(200))
            if let connection = listener {
                do {
                    notified(try connection.notifications(waitingUpTo: max(wait, .zero)))
                } catch {
                    listener = nil
                    disconnected(error)
                    retry = .now + backoff
                }
            } else if wait > .zero {
                let (seconds, attoseconds) = wait.components
                var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
                nanosleep(&pause, nil)
            }
            refresh(dueSessions())
        }
    }

    /// Keeps this replica's leases, drops the sessions it lost, and takes over those whose
    /// replica died (evaluated at once: their notifications went to a replica that is gone).
    private func renewLeases() {
        let held = state.withLockedValue { Array($0.bindings.keys) }
        let renewed: (lost: [String], taken: [(id: String, record: [UInt8])])
        do {
            renewed = try leases.renew(held)
        } catch {
            if state.withLockedValue({ $0.leasesReachable }) {
                logger.error("the sources' leases cannot be renewed; sessions are evaluated on as they were", metadata: ["error": "\(error)"])
            }
            state.withLockedValue { $0.leasesReachable = false }
            return
        }
        var adopted: [String] = []
        state.withLockedValue { state in
            state.leasesReachable = true
            for id in renewed.lost { state.bindings[id] = nil }
            for (id, record) in renewed.taken {
                guard let binding = SourceBinding(record: record, definitions) else { continue }
                state.bindings[id] = binding
                state.pending.insert(id)
                adopted.append(id)
            }
        }
        if !adopted.isEmpty {
            logger.notice("sources' sessions taken over from a replica gone", metadata: ["sessions": "\(adopted.count)"])
        }
        tellProblems()
    }

    /// A connection listening on every source's channels.
    private func listening() throws(PostgresError) -> PostgresConnection {
        let connection = try PostgresConnection(conninfo)
        for channel in Set(definitions.values.flatMap(\.channels)) { try connection.execute("LISTEN \(try connection.identifier(channel))") }
        return connection
    }

    private func disconnected(_ error: PostgresError) {
        metrics?.sources(connected: false)
        let wasUp = state.withLockedValue { state in
            defer { state.connected = false }
            return state.connected
        }
        if wasUp {
            logger.error("PostgreSQL lost; the sources' sessions keep their versions until it is back", metadata: ["error": "\(error)"])
        }
    }

    /// Takes notifications: each source listening on a channel named is due after its debounce.
    private func notified(_ channels: [String]) {
        guard !channels.isEmpty else { return }
        let now = ContinuousClock.now
        let named = Set(channels)
        state.withLockedValue { state in
            for definition in definitions.values where definition.channels.contains(where: named.contains) {
                state.notified[definition.name, default: 0] += 1
                if state.due[definition.name] == nil { state.due[definition.name] = now + definition.debounce }
            }
        }
    }

    private func nextDue() -> ContinuousClock.Instant {
        state.withLockedValue { state in
            guard state.pending.isEmpty else { return .now }
            return min(state.due.values.min() ?? .now + .seconds(1), state.nextRefresh.values.min() ?? .now + .seconds(1))
        }
    }

    /// The sessions whose source is due (notified, or its refresh), taken off the schedule.
    private func dueSessions() -> [String] {
        let now = ContinuousClock.now
        return state.withLockedValue { state in
            let pending = state.pending
            state.pending = []
            var sources: Set<String> = []
            for (source, due) in state.due where due <= now { sources.insert(source) }
            for source in sources { state.due[source] = nil }
            for (source, next) in state.nextRefresh where next <= now {
                sources.insert(source)
                if let refresh = definitions[source]?.refresh { state.nextRefresh[source] = now + refresh }
            }
            guard !sources.isEmpty else { return Array(pending) }
            return Array(pending.union(state.bindings.filter { sources.contains($0.value.source.name) }.keys))
        }
    }
}

/// Sources that cannot start: what is wrong, naming the source and what PostgreSQL said.
package struct SourceStartError: Error, CustomStringConvertible {
    package let description: String

    package init(description: String) { self.description = description }
}
