import CoreMetrics
import LiveCollections

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// What the service counts, through swift-metrics: requests by route and status, their
/// duration and body size, diff sizes, errors by code, and sessions. The backend (Prometheus,
/// in the executable) is the factory's; `exposition` renders it for `GET /metrics`.
package final class ServiceMetrics: Sendable {
    package static let itemsInLabel = "livedelta_diff_items_in"
    package static let changesOutLabel = "livedelta_diff_changes_out"

    let factory: any MetricsFactory
    let exposition: @Sendable () -> [UInt8]
    /// Handles, made once: creating one costs a registry lookup, using one does not.
    private let requestHandles = NIOLockedValueBox<[RequestKey: RequestHandles]>([:])
    private let errorCounters = NIOLockedValueBox<[ErrorCode: Counter]>([:])
    private let sourceCounters = NIOLockedValueBox<[[String]: Counter]>([:])
    private let sourcesConnected: Gauge
    private let itemsIn: Recorder
    private let changesOut: Recorder
    private let sessionsOpen: Gauge
    private let sessionBytes: Gauge
    private let sessionsEvicted: Counter
    private let sessionsExpired: Counter
    private let storeCommands: Timer
    private let storeWrittenBytes: Counter
    private let storeErrors: Counter
    private let storeConflicts: Counter
    private let storeCacheHits: Counter
    private let storeCacheMisses: Counter
    private let liveSubscribers: Gauge
    private let liveUnsentBytes: Gauge

    package init(factory: any MetricsFactory, exposition: @escaping @Sendable () -> [UInt8]) {
        self.factory = factory
        self.exposition = exposition
        sessionsOpen = Gauge(label: "livedelta_sessions_open", factory: factory)
        sessionBytes = Gauge(label: "livedelta_session_bytes", factory: factory)
        sessionsEvicted = Counter(label: "livedelta_sessions_evicted_total", factory: factory)
        sessionsExpired = Counter(label: "livedelta_sessions_expired_total", factory: factory)
        storeCommands = Timer(label: "livedelta_session_store_command_seconds", factory: factory)
        storeWrittenBytes = Counter(label: "livedelta_session_store_written_bytes_total", factory: factory)
        storeErrors = Counter(label: "livedelta_session_store_errors_total", factory: factory)
        storeConflicts = Counter(label: "livedelta_session_store_conflicts_total", factory: factory)
        storeCacheHits = Counter(label: "livedelta_session_store_cache_hits_total", factory: factory)
        storeCacheMisses = Counter(label: "livedelta_session_store_cache_misses_total", factory: factory)
        liveSubscribers = Gauge(label: "livedelta_live_subscribers", factory: factory)
        liveUnsentBytes = Gauge(label: "livedelta_live_unsent_bytes", factory: factory)
        sourcesConnected = Gauge(label: "livedelta_sources_connected", factory: factory)
        itemsIn = Recorder(label: Self.itemsInLabel, aggregate: true, factory: factory)
        changesOut = Recorder(label: Self.changesOutLabel, aggregate: true, factory: factory)
    }

    private struct RequestKey: Hashable {
        var route: String
        var status: Int
    }

    private struct RequestHandles {
        var count: Counter
        var duration: Timer
        /// A counter, not a histogram: an atomic add on every request, where a histogram takes a lock.
        var bodyBytes: Counter
    }

    /// Live subscribers now, and the bytes written to them and not yet read (each event once).
    func live(subscribers: Int, unsentBytes: Int) {
        liveSubscribers.record(subscribers)
        liveUnsentBytes.record(unsentBytes)
    }

    func request(route: String, status: Int, duration: Duration, bodyBytes: Int) {
        let key = RequestKey(route: route, status: status)
        let handles = requestHandles.withLockedValue { cache in
            if let handles = cache[key] { return handles }
            let handles = RequestHandles(
                count: Counter(label: "livedelta_requests_total", dimensions: [("route", route), ("status", String(status))], factory: factory),
                duration: Timer(label: "livedelta_request_duration_seconds", dimensions: [("route", route)], factory: factory),
                bodyBytes: Counter(label: "livedelta_request_body_bytes_total", dimensions: [("route", route)], factory: factory))
            cache[key] = handles
            return handles
        }
        handles.count.increment()
        let (seconds, attoseconds) = duration.components
        handles.duration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        handles.bodyBytes.increment(by: bodyBytes)
    }

    func error(code: ErrorCode) {
        errorCounters.withLockedValue { cache in
            if let counter = cache[code] { return counter }
            let counter = Counter(label: "livedelta_errors_total", dimensions: [("code", code.rawValue)], factory: factory)
            cache[code] = counter
            return counter
        }.increment()
    }

    /// How a source's session was evaluated: `committed` (a new version), `unchanged`,
    /// `refused` (rows that make no list, or a session gone), `unavailable` (PostgreSQL).
    package enum SourceOutcome: String, Sendable {
        case committed, unchanged, refused, unavailable
    }

    package func sourceEvaluated(_ source: String, _ outcome: SourceOutcome) {
        sourceCounters.withLockedValue { cache in
            if let counter = cache[[source, outcome.rawValue]] { return counter }
            let counter = Counter(
                label: "livedelta_source_evaluations_total", dimensions: [("source", source), ("outcome", outcome.rawValue)], factory: factory)
            cache[[source, outcome.rawValue]] = counter
            return counter
        }.increment()
    }

    /// Whether the sources' PostgreSQL is connected (1) or not (0).
    package func sources(connected: Bool) { sourcesConnected.record(connected ? 1 : 0) }

    /// A flat diff, by `/diff` or a session: the items on both sides, and the changes where
    /// the delta was computed.
    func diff(old: [JSONItem], new: [JSONItem], delta: IndexDelta?) {
        record(itemsIn: old.count + new.count, changesOut: delta?.changeCount)
    }

    /// A sectioned diff: the items on both sides, and the changes of both stages where the
    /// section stage was computed.
    func diff(old: [JSONSection], new: [JSONSection], sectionDelta: IndexDelta?, itemDelta: IndexPathDelta?) {
        record(itemsIn: old.itemCount + new.itemCount, changesOut: sectionDelta.map { $0.changeCount + (itemDelta?.changeCount ?? 0) })
    }

    private func record(itemsIn: Int, changesOut: Int?) {
        self.itemsIn.record(itemsIn)
        if let changesOut { self.changesOut.record(changesOut) }
    }

    /// For a session store's `events`.
    package func session(_ event: SessionEvent) {
        switch event {
        case .open(let count): sessionsOpen.record(count)
        case .bytes(let count): sessionBytes.record(count)
        case .evicted: sessionsEvicted.increment()
        case .expired(let count): sessionsExpired.increment(by: count)
        case .storeCommand(let duration):
            let (seconds, attoseconds) = duration.components
            storeCommands.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        case .storeWritten(let bytes): storeWrittenBytes.increment(by: bytes)
        case .storeError: storeErrors.increment()
        case .conflict: storeConflicts.increment()
        case .cacheHit: storeCacheHits.increment()
        case .cacheMiss: storeCacheMisses.increment()
        }
    }

}

/// What a session store reports as it works.
package enum SessionEvent: Sendable {
    case open(Int)
    /// The bytes the sessions take, as `SessionFootprint` counts them (the memory store).
    case bytes(Int)
    case evicted
    case expired(Int)
    /// A shared store: one pipeline of commands, and how long it took.
    case storeCommand(Duration)
    /// A shared store: the bytes of collection text one change wrote (the parts it rewrote).
    case storeWritten(Int)
    /// A shared store could not be reached, or failed.
    case storeError
    /// A commit lost to another replica's (it is read again and retried, or a 412).
    case conflict
    /// A change used the parsed copy this replica kept, or had to read the session again.
    case cacheHit
    case cacheMiss
}
