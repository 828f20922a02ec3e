import MicroHTTP

/// `GET /sessions/{id}/events` (server-sent events) and `GET /sessions/{id}/changes` (long
/// poll): a session's committed steps as they happen, resumed from a token.
struct LiveEndpoints {
    let hub: LiveHub
    let sessions: SessionEndpoints

    /// What both routes read from the query string.
    private struct Request {
        var format: DeltaFormat?
        var changes: ChangeDetail?
        var rows = CarriedRows.all
        var token: WindowToken?
        var coalesce = false
        var window: WindowRequest?

        init(_ request: HTTPRequest, maxWindowRows: Int) throws(APIError) {
            window = try WindowRequest.parse(request, maxRows: maxWindowRows)
            (format, changes) = try request.spellingParameters()
            if let given = request.query("rows") {
                guard let carried = CarriedRows(rawValue: given) else {
                    throw .invalidParameter(
                        "rows", "rows must be all (batch and sequential deltas carry every row) or changed (only the rows they insert or change)")
                }
                rows = carried
            }
            switch request.query("catchUp") {
            case nil, "replay": coalesce = false
            case "coalesce": coalesce = true
            default: throw .invalidParameter("catchUp", "catchUp must be replay (every missed version) or coalesce (one delta to now)")
            }
            // A browser's reconnection sends the last id it saw, which is newer than the
            // `since` its URL was first opened with. A token the server cannot read, or no
            // longer knows, is answered with a reset: never with silence.
            let given = request.header("Last-Event-ID") ?? request.query("since")
            token = given.flatMap { WindowToken(token: $0.trimmingSpaces.description) }
        }

        func spelling(_ options: DiffOptions) -> LiveSpelling {
            LiveSpelling(format: format ?? options.format, changes: changes ?? options.changes, rows: rows)
        }
    }

    /// - Parameter expires: when the subscriber's token expires (seconds since 1970): the
    ///   stream ends then with an `expired` event, and the client resumes with a new token.
    func events(_ request: HTTPRequest, id: String, expires: Int64?) throws(APIError) -> HTTPResponse {
        let asked = try Request(request, maxWindowRows: hub.limits.maxWindowRows)
        let stream = HTTPStream(maxBuffered: hub.limits.subscriberBufferBytes, budget: hub.unsent)
        // A client's reconnection delay, before any event.
        stream.write(Array("retry: \(hub.limits.retryMilliseconds)\n\n".utf8))
        let sink = EventStreamSink(
            stream: stream, heartbeatSeconds: hub.limits.heartbeatSeconds, now: monotonicNow(), expiry: expires.map(Self.monotonic))
        try subscribe(id: id, asked, sink: sink, stream: stream)
        return HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no"),
            ], stream: stream)
    }

    func changes(_ request: HTTPRequest, id: String, expires: Int64?) throws(APIError) -> HTTPResponse {
        let asked = try Request(request, maxWindowRows: hub.limits.maxWindowRows)
        let wait: Int
        if let text = request.query("wait") {
            guard let seconds = Int(text), (0...hub.limits.maxWaitSeconds).contains(seconds) else {
                throw .invalidParameter("wait", "wait must be a whole number of seconds from 0 to \(hub.limits.maxWaitSeconds)")
            }
            wait = seconds
        } else {
            wait = min(20, hub.limits.maxWaitSeconds)
        }
        // A poll is answered in one write (every missed version at once, up to the feed's
        // history), so no per-subscriber bound applies: its events are shared with every other
        // poll and stream, and the hub's budget bounds what they all hold.
        let stream = HTTPStream(maxBuffered: .max, budget: hub.unsent)
        // A poll answers (empty) by its token's expiry at the latest.
        let deadline = min(monotonicNow() + Int64(wait) * 1_000_000_000, expires.map(Self.monotonic) ?? .max)
        let sink = LongPollSink(stream: stream, deadline: deadline)
        try subscribe(id: id, asked, sink: sink, stream: stream)
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")], stream: stream)
    }

    /// The monotonic time (as ticks count it) of a moment given in seconds since 1970.
    private static func monotonic(_ unixSeconds: Int64) -> Int64 {
        let left = max(0, unixSeconds - AccessPolicy.unixNow())
        return monotonicNow() + min(left, 1 << 30) * 1_000_000_000
    }

    private func subscribe(id: String, _ asked: Request, sink: any LiveSink, stream: HTTPStream) throws(APIError) {
        let store = sessions.store
        guard hub.unsent.bytes < hub.unsent.limit else { throw Self.unsentFull(hub.unsent.limit) }
        let subscriber: LiveSubscriber
        do throws(LiveHub.SubscribeError) {
            subscriber = try hub.subscribe(
                id: id, spelling: asked.spelling, sink: sink, from: asked.token, window: asked.window, coalesce: asked.coalesce,
                snapshot: { () throws(SessionError) in
                    // Followed before it is read: no step committed after the read goes unlogged.
                    store.follow([id])
                    return try store.snapshot(id: id)
                })
        } catch {
            throw refusal(error, id: id)
        }
        stream.onClose { [hub] in hub.leave(subscriber, id: id) }
        // Its first events did not fit in what the server holds for clients that have not
        // read yet: a refusal now says so, where a stream would say nothing and close.
        if stream.dropped == .budget {
            hub.leave(subscriber, id: id)
            throw Self.unsentFull(hub.unsent.limit)
        }
    }

    private func refusal(_ error: LiveHub.SubscribeError, id: String) -> APIError {
        switch error {
        case .session(let failure): return sessions.translate(failure, location: .sessionBody)
        case .window(let refusal): return refusal.apiError(id: id)
        case .stopping:
            var apiError = APIError(.tooManySubscribers, message: "the server is stopping; reconnect to another")
            apiError.headers = [("Retry-After", "1")]
            return apiError
        case .full(let which):
            let message: String
            var code = ErrorCode.tooManySubscribers
            switch which {
            case .session:
                message =
                    "session \(SessionNamespace.shown(id)) has all the \(hub.limits.maxSubscribersPerSession) subscribers one session may have (--max-subscribers-per-session, LIVEDELTA_MAX_SUBSCRIBERS_PER_SESSION); try again shortly"
            case .server:
                message =
                    "the server holds all the \(hub.limits.maxSubscribers) subscribers it may (--max-subscribers, LIVEDELTA_MAX_SUBSCRIBERS); try again shortly"
            case .tenant:
                code = .quotaExceeded
                message =
                    "this tenant's sessions have all the \(hub.limits.maxSubscribersPerTenant) subscribers one tenant may have (--max-subscribers-per-tenant, LIVEDELTA_MAX_SUBSCRIBERS_PER_TENANT); close some, or try again shortly"
            }
            var apiError = APIError(code, message: message)
            apiError.details = [("limit", .string(Self.limitName(which)))]
            apiError.headers = [("Retry-After", "5")]
            return apiError
        }
    }

    private static func limitName(_ which: LiveHub.Full) -> String {
        switch which {
        case .server: "max-subscribers"
        case .session: "max-subscribers-per-session"
        case .tenant: "max-subscribers-per-tenant"
        }
    }

    private static func unsentFull(_ limit: Int) -> APIError {
        var apiError = APIError(
            .tooManySubscribers,
            message:
                "the server holds all the \(limit) bytes it keeps for subscribers that have not read them yet (--max-unsent-bytes, LIVEDELTA_MAX_UNSENT_BYTES); try again shortly"
        )
        apiError.details = [("limit", .string("max-unsent-bytes"))]
        apiError.headers = [("Retry-After", "5")]
        return apiError
    }
}

extension HTTPRequest {
    /// The `format` and `changes` query parameters, where given: how an answer spells its delta
    /// on routes without a body that could say it.
    func spellingParameters() throws(APIError) -> (format: DeltaFormat?, changes: ChangeDetail?) {
        var format: DeltaFormat?
        var changes: ChangeDetail?
        if let name = query("format") {
            guard let given = DeltaFormat(rawValue: name) else {
                throw .invalidParameter("format", "format must be one of \(DeltaFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            format = given
        }
        if let name = query("changes") {
            guard let given = ChangeDetail(rawValue: name) else {
                throw .invalidParameter("changes", "changes must be one of \(ChangeDetail.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            changes = given
        }
        return (format, changes)
    }
}
