import ByteJSON
import Logging
import MicroHTTP

/// The HTTP API: routes requests, checks what they carry, and turns every failure into a JSON
/// error. One instance serves all worker threads.
package final class LiveDeltaService: Sendable {
    package struct Configuration: Sendable {
        /// Deeper JSON nesting, anywhere in a body, is refused with a 400.
        package var maxDepth = 512
        /// Items in one request body, all its collections together (413 above).
        package var maxItemsPerRequest = 2_000_000
        /// Items read from bodies and not yet answered, all requests together (503 above).
        package var maxItemsInFlight = 8_000_000
        /// Which web origins may call from a browser (`--cors-origins`); none by default.
        package var cors = CORSPolicy.off
        /// A write's first answer larger than this is not kept under its `Idempotency-Key`: a
        /// retry is told the write took effect and to read the session (409
        /// `idempotency_answer_lost`), so a ledger never holds a large delta for a day.
        package var maxRecordedAnswerBytes = 256 << 10
        /// Peers (proxies, load balancers) whose `X-Forwarded-For` the request log believes.
        package var trustedProxies: Set<String> = []

        package init() {}
    }

    package let configuration: Configuration
    package let sessions: any SessionStore
    /// Live sessions: subscribers and the steps they are sent.
    package let live: LiveHub
    /// Items held by requests now, against `maxItemsInFlight`.
    package let itemBudget: ItemBudget
    /// Who may call what (tokens, tenants, scopes).
    package let access: AccessPolicy
    /// Sessions fed by the operator's queries, where a database is configured.
    package let sources: (any SessionSources)?
    /// Writes' `Idempotency-Key`s and first answers.
    let idempotentWrites: IdempotentWrites
    let limits: ReadLimits
    let metrics: ServiceMetrics?
    let logger: Logger
    /// Whether `logger` takes request lines, asked once: asking it per request copies its
    /// handler, counting references on objects every worker thread shares.
    private let logsRequests: Bool
    private let requestLog: RequestLog

    /// - Parameters:
    ///   - metrics: what to count requests with, and `GET /metrics`; none, no route.
    ///   - idempotency: where writes' keys are kept (in this process where not given).
    package init(
        configuration: Configuration = Configuration(), sessions: (any SessionStore)? = nil, live: LiveHub.Limits = LiveHub.Limits(),
        metrics: ServiceMetrics? = nil, access: AccessPolicy = .open, idempotency: (any IdempotencyLedger)? = nil,
        sources: (any SessionSources)? = nil, logger: Logger = Logger(label: "livedelta")
    ) {
        self.sources = sources
        idempotentWrites = IdempotentWrites(
            ledger: idempotency ?? InMemoryIdempotencyLedger(), maxAnswerBytes: configuration.maxRecordedAnswerBytes)
        self.configuration = configuration
        self.access = access
        itemBudget = ItemBudget(limit: configuration.maxItemsInFlight)
        limits = ReadLimits(maxDepth: configuration.maxDepth, maxItems: configuration.maxItemsPerRequest, budget: itemBudget)
        let sessions = sessions ?? InMemorySessionStore(logger: logger)
        self.sessions = sessions
        self.live = LiveHub(
            limits: live, logger: logger, follow: { [sessions] in sessions.follow($0) },
            report: { [metrics] in metrics?.live(subscribers: $0, unsentBytes: $1) },
            history: { [sessions] in sessions.loggedSteps(id: $0, incarnation: $1, from: $2) },
            started: { [sessions] in sessions.feedStarted(id: $0) })
        sessions.observe(with: self.live)
        sources?.tellProblems { [hub = self.live] id, status in hub.notice(id: id, LiveEvent(name: .source, id: nil, data: status)) }
        self.metrics = metrics
        self.logger = logger
        logsRequests = logger.logLevel <= .info
        requestLog = RequestLog(logger: logger, trustedProxies: configuration.trustedProxies)
    }

    /// Answers one request and, where the logger takes `info`, logs one line for it.
    package func handle(_ request: HTTPRequest) -> HTTPResponse {
        let started = ContinuousClock.now
        let requestID = RequestLog.id(of: request)
        var response: HTTPResponse
        var code: ErrorCode?
        // Matched once: for the answer, and for the label it is counted under.
        let matched = Self.routeTable.match(request.path)
        #if DEBUG
            let lifetimeViolations = DocumentLifetime.onThisThread
        #endif
        do {
            response = try Self.routeTable.respond(to: request, matched: matched, in: self)
        } catch {
            metrics?.error(code: error.code)
            code = error.code
            response = error.response
        }
        #if DEBUG
            // An item read after its document was let go: the answer may hold wrong bytes.
            if DocumentLifetime.onThisThread != lifetimeViolations {
                let error = APIError.internalError("an item outlived its document")
                metrics?.error(code: error.code)
                code = error.code
                response = error.response
            }
        #endif
        response.headers.append(("X-Request-Id", requestID))
        if configuration.cors.isOn && request.method != "OPTIONS" {
            response.headers += configuration.cors.headers(for: request, credentials: Self.routeTable.takesCookie(matched?.template))
        }
        let elapsed = ContinuousClock.now - started
        if response.status >= 500 && response.status != 503 {
            logger.error(
                "internal failure",
                metadata: [
                    "method": "\(request.method)", "path": "\(request.path)", "request_id": "\(requestID)",
                    "answer": "\(String(decoding: response.body, as: UTF8.self))",
                ])
        }
        metrics?.request(route: matched?.template ?? "other", status: response.status, duration: elapsed, bodyBytes: request.body.count)
        guard logsRequests else { return response }
        let route = matched?.template ?? "other"
        requestLog.request(request, id: requestID, route: route, response: response, code: code, elapsed: elapsed)
        requestLog.streamEnds(response, id: requestID, route: route)
        return response
    }

    /// How the HTTP server's own refusals look: JSON errors like every other.
    package func errorResponse(_ error: HTTPServerError) -> HTTPResponse {
        APIError.server(error).response
    }

    /// Counts one of the HTTP server's own refusals, by its error code.
    package func refused(_ error: HTTPServerError) {
        metrics?.error(code: APIError.server(error).code)
    }

    /// Ends the threads the service started (the live hub's, a shared store's listener), once
    /// the HTTP server has stopped: whoever made the service stops it.
    package func stop() {
        live.stop()
        sources?.stop()
        sessions.close()
        access.stop()
    }

    var sessionEndpoints: SessionEndpoints { SessionEndpoints(store: sessions, limits: limits, metrics: metrics, sources: sources) }

    var liveEndpoints: LiveEndpoints { LiveEndpoints(hub: live, sessions: sessionEndpoints) }

    /// Whether a request may wait (for a session's lock, or the session store), as its route
    /// says: such requests run on the server's waiting threads, never on an event-loop thread.
    package func mayWait(_ request: HTTPRequest) -> Bool { Self.routeTable.mayWait(request.path) }

    /// A body must say it is JSON: `application/json` or any `+json` type, parameters allowed.
    static func requireJSON(_ request: HTTPRequest) throws(APIError) {
        try requireIdentityCoding(request)
        // The usual spelling, checked without making strings.
        if request.header("Content-Type", equalsIgnoringASCIICase: "application/json") { return }
        let type = request.header("Content-Type").map { $0.prefix { $0 != ";" }.trimmingSpaces.lowercased() } ?? ""
        guard type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json")) else {
            throw APIError(
                .unsupportedMediaType,
                message: type.isEmpty
                    ? "the body needs Content-Type: application/json"
                    : "the body is \(type); it must be application/json")
        }
    }
}

extension LiveDeltaService {
    /// A body is read as sent: one with a content coding (gzip, say) would be read as JSON and
    /// refused for what it is not, so it is a 415 naming the coding, with `Accept-Encoding`
    /// saying what is taken (RFC 9110, 15.5.16).
    static func requireIdentityCoding(_ request: HTTPRequest) throws(APIError) {
        let codings = request.headerValues("Content-Encoding").flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces }
        guard let coding = codings.first(where: { !$0.isEmpty && $0.lowercased() != "identity" }) else { return }
        var error = APIError(
            .unsupportedMediaType,
            message: "the body has Content-Encoding \(coding), which the server does not decode; send it without a content coding")
        error.headers = [("Accept-Encoding", "identity")]
        throw error
    }
}

extension HTTPResponse {
    static func json(_ body: [UInt8], status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: SubSequence {
        var start = startIndex, end = endIndex
        while start < end, self[start] == " " || self[start] == "\t" { start = index(after: start) }
        while end > start, self[index(before: end)] == " " || self[index(before: end)] == "\t" { end = index(before: end) }
        return self[start..<end]
    }
}
