import CoreMetrics
import Synchronization

/// What the service counts, through swift-metrics: requests by route and status, their
/// duration and body size, diff sizes, errors by code, and sessions. The backend (Prometheus,
/// in the executable) is the factory's; `exposition` renders it for `GET /metrics`.
public final class ServiceMetrics: Sendable {
    public static let bodyBytesLabel = "livedelta_request_body_bytes"
    public static let itemsInLabel = "livedelta_diff_items_in"
    public static let changesOutLabel = "livedelta_diff_changes_out"

    let factory: any MetricsFactory
    let exposition: @Sendable () -> [UInt8]
    /// Handles by label and dimensions: creating one costs a registry lookup, using one does not.
    private let counters = Mutex<[String: Counter]>([:])
    private let timers = Mutex<[String: Timer]>([:])
    private let recorders = Mutex<[String: Recorder]>([:])
    private let sessionsOpen: Gauge
    private let sessionsEvicted: Counter
    private let sessionsExpired: Counter

    public init(factory: any MetricsFactory, exposition: @escaping @Sendable () -> [UInt8]) {
        self.factory = factory
        self.exposition = exposition
        sessionsOpen = Gauge(label: "livedelta_sessions_open", factory: factory)
        sessionsEvicted = Counter(label: "livedelta_sessions_evicted_total", factory: factory)
        sessionsExpired = Counter(label: "livedelta_sessions_expired_total", factory: factory)
    }

    func request(route: String, status: Int, duration: Duration, bodyBytes: Int) {
        counter("livedelta_requests_total", [("route", route), ("status", String(status))]).increment()
        let (seconds, attoseconds) = duration.components
        timer("livedelta_request_duration_seconds", [("route", route)])
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        recorder(Self.bodyBytesLabel, [("route", route)]).record(bodyBytes)
    }

    func error(code: String) {
        counter("livedelta_errors_total", [("code", code)]).increment()
    }

    func diff(itemsIn: Int, changesOut: Int?) {
        recorder(Self.itemsInLabel, []).record(itemsIn)
        if let changesOut { recorder(Self.changesOutLabel, []).record(changesOut) }
    }

    /// For a session store's `events`.
    public func session(_ event: SessionEvent) {
        switch event {
        case .open(let count): sessionsOpen.record(count)
        case .evicted: sessionsEvicted.increment()
        case .expired(let count): sessionsExpired.increment(by: count)
        }
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        Self.cached(counters, label, dimensions) { Counter(label: label, dimensions: dimensions, factory: factory) }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> Timer {
        Self.cached(timers, label, dimensions) { Timer(label: label, dimensions: dimensions, factory: factory) }
    }

    private func recorder(_ label: String, _ dimensions: [(String, String)]) -> Recorder {
        Self.cached(recorders, label, dimensions) { Recorder(label: label, dimensions: dimensions, aggregate: true, factory: factory) }
    }

    /// The handle for a label and dimensions, made the first time it is asked for.
    private static func cached<Handle: Sendable>(
        _ cache: borrowing Mutex<[String: Handle]>, _ label: String, _ dimensions: [(String, String)], make: () -> Handle
    ) -> Handle {
        let key = dimensions.reduce(label) { $0 + "|" + $1.0 + "=" + $1.1 }
        return cache.withLock { handles in
            if let handle = handles[key] { return handle }
            let handle = make()
            handles[key] = handle
            return handle
        }
    }

    /// The route a path belongs to, for labels (ids and unknown paths would make too many).
    static func route(of path: String) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        switch Array(segments) {
        case ["diff"], ["health"], ["openapi.yaml"], ["metrics"], ["sessions"]: return path
        case let s where s.count == 2 && s[0] == "sessions": return "/sessions/{id}"
        case let s where s.count == 3 && s[0] == "sessions" && ["update", "append", "delta"].contains(s[2]): return "/sessions/{id}/\(s[2])"
        default: return "other"
        }
    }
}

/// What a session store reports as it works.
public enum SessionEvent: Sendable {
    case open(Int)
    case evicted
    case expired(Int)
}
