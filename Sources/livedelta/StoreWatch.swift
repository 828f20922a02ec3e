import Dispatch
import LiveDeltaService
import Logging

/// Says in the log when the shared session store cannot be reached: at start, every 30 s while
/// it lasts, and once when it answers again. Without it the server would log "listening" and
/// serve 503s, and only a probe of /ready would know why.
// @unchecked Sendable: the timer is set up in init and only cancelled after (Dispatch sources
// may be cancelled from any thread), and the two instants are read and written only by its
// handler, which runs on one serial queue, one call at a time.
final class StoreWatch: @unchecked Sendable {  // see above
    private let timer: any DispatchSourceTimer
    private var downSince: ContinuousClock.Instant?
    private var lastWarning: ContinuousClock.Instant?

    init(_ sessions: any SessionStore, logger: Logger, store: String) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "livedelta.store-watch"))
        timer.setEventHandler { [unowned self] in self.check(sessions, logger: logger, store: store) }
        // The first look at once, so that the warning stands right after "listening".
        timer.schedule(deadline: .now(), repeating: .seconds(5))
        timer.activate()
    }

    private func check(_ sessions: any SessionStore, logger: Logger, store: String) {
        let now = ContinuousClock.now
        if sessions.isReady {
            if let since = downSince {
                logger.notice(
                    "session store reachable again",
                    metadata: ["store": "\(store)", "down_seconds": .stringConvertible(Int((now - since).components.seconds))])
            }
            downSince = nil
            lastWarning = nil
            return
        }
        let since = downSince ?? now
        downSince = since
        if let last = lastWarning, now - last < .seconds(30) { return }
        lastWarning = now
        logger.warning(
            "session store unreachable: session requests answer 503 session_store_unavailable, and /ready 503, until it answers",
            metadata: ["store": "\(store)", "down_seconds": .stringConvertible(Int((now - since).components.seconds))])
    }

    /// No more looks; the handler in progress, if any, finishes first.
    func stop() { timer.cancel() }
}
