import MicroHTTP
import TokenAuth

/// One operation of the API: a method on a path template (`/sessions/{id}/update`), and what
/// answers it. The template is also the label its requests are counted under.
struct Route: Sendable {
    let method: String
    let template: String
    /// What a token must hold to call it; nil for routes open to all (health, the contract,
    /// the page and its script, which hold no data).
    let scope: Scope?
    /// Whether the token may come in a cookie (the live routes, which a browser's
    /// `EventSource` calls and which change nothing).
    var cookie = false
    /// Whether it writes: an `Idempotency-Key` makes it safe to retry.
    var write = false
    /// Whether it may wait (for a session's lock, or the session store): its requests run on
    /// the server's waiting threads, never on an event-loop thread.
    var mayWait = false
    let handler: @Sendable (LiveDeltaService, HTTPRequest, RouteParameters) throws(APIError) -> HTTPResponse

    init(
        method: String, template: String, scope: Scope?, cookie: Bool = false, write: Bool = false, mayWait: Bool = false,
        handler: @escaping @Sendable (LiveDeltaService, HTTPRequest, RouteParameters) throws(APIError) -> HTTPResponse
    ) {
        self.method = method
        self.template = template
        self.scope = scope
        self.cookie = cookie
        self.write = write
        self.mayWait = mayWait
        self.handler = handler
    }
}

/// The path segments a template's `{name}`s matched, as sent (not yet checked).
struct RouteParameters: Sendable {
    private var values: [(name: Substring, value: Substring)] = []
    /// The request's verified token, where tokens are checked.
    var grant: TokenGrant?

    mutating func append(_ name: Substring, _ value: Substring) { values.append((name, value)) }

    subscript(_ name: String) -> Substring { values.first { $0.name == name }?.value ?? "" }

    /// The `{id}` checked, and reached by the token, as the stores key it (in the token's
    /// tenant).
    func sessionKey() throws(APIError) -> String {
        try Self.sessionKey(SessionEndpoints.validID(self["id"]), grant: grant)
    }

    static func sessionKey(_ id: String, grant: TokenGrant?) throws(APIError) -> String {
        if let grant, !grant.reaches(session: id) {
            throw APIError(.insufficientScope, message: "the token's sessions claim does not reach the session \(id)")
        }
        return SessionNamespace.key(id, for: grant)
    }
}

/// The routes, in one table: routing, 405s with `Allow` (checked before anything in the path
/// or body is), metrics labels, and (a test checks) openapi.yaml's paths all follow from it.
/// A GET route also answers HEAD.
struct RouteTable: Sendable {
    let routes: [Route]
    /// Each template's segments, split once.
    private let templates: [(template: String, segments: [Substring])]
    /// Templates without parameters, by path, where no template with parameters has as many
    /// segments (so that the walk could not find another): most requests are found here
    /// without splitting their path.
    private let exact: [String: String]
    /// Templates with a route that may wait.
    private let waiting: Set<String>

    init(_ routes: [Route]) {
        self.routes = routes
        waiting = Set(routes.filter(\.mayWait).map(\.template))
        var seen = Set<String>()
        templates = routes.compactMap { route in
            guard seen.insert(route.template).inserted else { return nil }
            return (route.template, Self.segments(of: route.template))
        }
        let parameterised = Set(templates.filter { $0.template.contains("{") }.map(\.segments.count))
        exact = Dictionary(
            templates.filter { !$0.template.contains("{") && !parameterised.contains($0.segments.count) }.map { ($0.template, $0.template) },
            uniquingKeysWith: { first, _ in first })
    }

    /// The template a path matches, and its parameters (decoded); nil where none does, or the
    /// path cannot be decoded (`pathProblem` says why).
    func match(_ path: String) -> (template: String, parameters: RouteParameters)? {
        if let template = exact[path] { return (template, RouteParameters()) }
        guard let segments = Self.decodedSegments(of: path) else { return nil }
        candidates: for (template, pattern) in templates where pattern.count == segments.count {
            var parameters = RouteParameters()
            for (expected, actual) in zip(pattern, segments) {
                if expected.first == "{" && expected.last == "}" {
                    parameters.append(expected.dropFirst().dropLast(), actual)
                } else if expected != actual {
                    continue candidates
                }
            }
            return (template, parameters)
        }
        return nil
    }

    /// Whether a request to `path` may wait: its template has a route that may (by template,
    /// not by method, so that a 405 or an OPTIONS goes where the route's requests go).
    func mayWait(_ path: String) -> Bool {
        guard !waiting.isEmpty, let (template, _) = match(path) else { return false }
        return waiting.contains(template)
    }

    /// A path's segments after its leading `/`, split at each `/` byte. Not at each `/`
    /// Character: a segment that begins with a combining scalar (U+1F3FB, a skin tone) makes
    /// one grapheme with the slash before it, and the path would match no template.
    private static func segments(of path: String) -> [Substring] {
        path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst().map { Substring($0) }
    }

    /// The segments of a path as sent, each percent-decoded after the split, so that an encoded
    /// `/` stays in its segment (`/sessions/a%2Fupdate` names the session `a/update`, which no
    /// id can be, never an update of `a`); nil where one cannot be decoded or decodes to a
    /// control character.
    private static func decodedSegments(of path: String) -> [Substring]? {
        var decoded: [Substring] = []
        for segment in segments(of: path) {
            guard let text = PercentDecoding.decode(segment), !PercentDecoding.hasControlCharacter(text) else { return nil }
            decoded.append(Substring(text))
        }
        return decoded
    }

    /// Why a path cannot be routed at all (a 400 where a 404 would hide the reason); nil where
    /// it can.
    static func pathProblem(_ path: String) -> APIError? {
        for (index, segment) in segments(of: path).enumerated() {
            guard let text = PercentDecoding.decode(segment) else {
                return APIError(
                    .badRequest,
                    message:
                        "segment \(index + 1) of the path is not percent-encoded UTF-8 (each % must be followed by two hex digits); encode it with RFC 3986 rules"
                )
            }
            if PercentDecoding.hasControlCharacter(text) {
                return APIError(
                    .badRequest,
                    message: "segment \(index + 1) of the path holds a control character (such as %00 or %0A), which no path of this API takes")
            }
        }
        return nil
    }

    /// The methods a template takes, as `Allow` lists them (every route answers `OPTIONS`).
    func methods(of template: String) -> [String] {
        routes.filter { $0.template == template }.flatMap { $0.method == "GET" ? ["GET", "HEAD"] : [$0.method] } + ["OPTIONS"]
    }

    /// Whether a route of the template takes its token from a cookie (so that a listed origin
    /// may send credentials to it).
    func takesCookie(_ template: String?) -> Bool {
        routes.contains { $0.template == template && $0.cookie }
    }

    /// Answers the request by the route its path (`matched`, as `match` found it) and method
    /// name: 404 where no template matches, 405 with `Allow` where the template takes other
    /// methods.
    func respond(
        to request: HTTPRequest, matched: (template: String, parameters: RouteParameters)?, in service: LiveDeltaService
    ) throws(APIError) -> HTTPResponse {
        guard let (template, found) = matched else { throw Self.pathProblem(request.path) ?? .notFound(request.path) }
        if request.method == "OPTIONS" {
            // Before any token: a browser's preflight carries none.
            return service.configuration.cors.preflight(request, methods: methods(of: template), credentials: takesCookie(template))
        }
        let method = request.method == "HEAD" ? "GET" : request.method
        guard let route = routes.first(where: { $0.template == template && $0.method == method }) else {
            throw .methodNotAllowed(request.method, request.path, allowed: methods(of: template))
        }
        var parameters = found
        parameters.grant = try service.access.authorize(request, scope: route.scope, cookieAllowed: route.cookie) { rejection in
            service.logger.notice("token refused", metadata: ["reason": "\(rejection)", "path": "\(request.path)"])
        }
        var response: HTTPResponse
        if route.write, let key = try IdempotentWrites.key(in: request) {
            // The session the write is about (a creation's is named by its key), for a ledger
            // that keeps the key beside it. A replay answers without running the handler, so
            // the checks the handler makes of the token run here first: the session it names
            // must be one the token reaches.
            let tenant = parameters.grant?.tenant
            let session: String? =
                if template.contains("{id}") {
                    try parameters.sessionKey()
                } else if template == "/sessions" {
                    try Self.creationKey(SessionEndpoints.newID(key: key, tenant: tenant), grant: parameters.grant)
                } else {
                    nil
                }
            response = try service.idempotentWrites.perform(request, tenant: parameters.grant?.tenant ?? "", key: key, session: session) {
                () throws(APIError) in
                try route.handler(service, request, parameters)
            }
            // A replayed creation names the session it made: the token must reach that one too.
            if let grant = parameters.grant, response.headers.contains(where: { $0.name == "Idempotent-Replayed" }),
                let location = response.headers.first(where: { $0.name.equalsIgnoringASCIICase("Location") })?.value,
                location.hasPrefix("/sessions/")
            {
                guard grant.reaches(session: String(location.dropFirst("/sessions/".count))) else {
                    // Not naming it: the id is what the token may not learn.
                    throw APIError(
                        .insufficientScope, message: "the token's sessions claim does not reach the session this Idempotency-Key's request created")
                }
            }
        } else {
            response = try route.handler(service, request, parameters)
        }
        // The answer depends on the token: no cache may give it to another.
        if parameters.grant != nil { response.headers.append(("Vary", route.cookie ? "Authorization, Cookie" : "Authorization")) }
        return response
    }
}

extension RouteTable {
    /// The store id of the session a creation under an Idempotency-Key makes. Its id is the
    /// key's, so a refusal must not name it: a retry of another token's creation would learn
    /// the session that one made.
    static func creationKey(_ id: String, grant: TokenGrant?) throws(APIError) -> String {
        if let grant, !grant.reaches(session: id) {
            throw APIError(.insufficientScope, message: "the token's sessions claim does not reach the session this request would create")
        }
        return SessionNamespace.key(id, for: grant)
    }
}

extension LiveDeltaService {
    /// Every route of the API.
    static let routeTable = RouteTable([
        Route(method: "POST", template: "/diff", scope: .diff) { service, request, _ throws(APIError) in
            try requireJSON(request)
            return .json(try DiffEndpoint.respond(to: request.body, limits: service.limits, metrics: service.metrics))
        },
        Route(method: "POST", template: "/sessions", scope: .sessionsWrite, write: true, mayWait: true) {
            service, request, parameters throws(APIError) in
            let id =
                try IdempotentWrites.key(in: request).map { SessionEndpoints.newID(key: $0, tenant: parameters.grant?.tenant) }
                ?? SessionEndpoints.newID()
            return try service.sessionEndpoints.create(
                request, id: RouteParameters.sessionKey(id, grant: parameters.grant), tenant: parameters.grant?.tenant)
        },
        Route(method: "GET", template: "/sessions/{id}", scope: .sessionsRead, mayWait: true) { service, request, parameters throws(APIError) in
            try service.sessionEndpoints.show(
                id: parameters.sessionKey(), window: WindowRequest.parse(request, maxRows: service.live.limits.maxWindowRows))
        },
        Route(method: "PUT", template: "/sessions/{id}", scope: .sessionsWrite, write: true, mayWait: true) {
            service, request, parameters throws(APIError) in
            try service.sessionEndpoints.create(request, id: parameters.sessionKey(), tenant: parameters.grant?.tenant)
        },
        Route(method: "DELETE", template: "/sessions/{id}", scope: .sessionsWrite, write: true, mayWait: true) {
            service, request, parameters throws(APIError) in
            try service.sessionEndpoints.delete(request, id: parameters.sessionKey())
        },
        Route(method: "POST", template: "/sessions/{id}/update", scope: .sessionsWrite, write: true, mayWait: true) {
            service, request, parameters throws(APIError) in
            try service.sessionEndpoints.change(request, id: parameters.sessionKey(), action: .update)
        },
        Route(method: "POST", template: "/sessions/{id}/append", scope: .sessionsWrite, write: true, mayWait: true) {
            service, request, parameters throws(APIError) in
            try service.sessionEndpoints.change(request, id: parameters.sessionKey(), action: .append)
        },
        Route(method: "POST", template: "/sessions/{id}/changes", scope: .sessionsWrite, write: true, mayWait: true) {
            service, request, parameters throws(APIError) in
            try service.sessionEndpoints.applyChanges(request, id: parameters.sessionKey())
        },
        Route(method: "POST", template: "/sessions/{id}/delta", scope: .sessionsRead, mayWait: true) {
            service, request, parameters throws(APIError) in
            try service.sessionEndpoints.change(request, id: parameters.sessionKey(), action: .delta)
        },
        Route(method: "GET", template: "/sessions/{id}/events", scope: .sessionsSubscribe, cookie: true, mayWait: true) {
            service, request, parameters throws(APIError) in
            try service.liveEndpoints.events(request, id: parameters.sessionKey(), expires: parameters.grant?.expires)
        },
        Route(method: "GET", template: "/sessions/{id}/changes", scope: .sessionsSubscribe, cookie: true, mayWait: true) {
            service, request, parameters throws(APIError) in
            try service.liveEndpoints.changes(request, id: parameters.sessionKey(), expires: parameters.grant?.expires)
        },
        Route(method: "GET", template: "/health", scope: nil) { _, _, _ throws(APIError) in
            .json(Array(#"{"status":"ok"}"#.utf8))
        },
        Route(method: "GET", template: "/ready", scope: nil, mayWait: true) { service, _, _ throws(APIError) in
            guard service.sessions.isReady else {
                var error = APIError(.sessionStoreUnavailable, message: "the session store cannot be reached just now")
                error.headers = [("Retry-After", "1")]
                throw error
            }
            if let sources = service.sources, !sources.isReady {
                var error = APIError(.sourceUnavailable, message: "the sources' database (--postgres) cannot be reached just now")
                error.headers = [("Retry-After", "1")]
                throw error
            }
            return .json(Array(#"{"status":"ready"}"#.utf8))
        },
        Route(method: "GET", template: "/openapi.yaml", scope: nil) { _, _, _ throws(APIError) in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], body: Array(OpenAPISpec.yaml.utf8))
        },
        Route(method: "GET", template: "/live/{id}", scope: nil) { _, _, parameters throws(APIError) in
            // The id is checked here as everywhere; the page reads it from its own address.
            _ = try SessionEndpoints.validID(parameters["id"])
            return WebAssets.page
        },
        Route(method: "GET", template: "/clients/{file}", scope: nil) { _, request, parameters throws(APIError) in
            guard let asset = WebAssets.file(named: parameters["file"]) else {
                throw APIError(
                    .notFound,
                    message: "no client file \(request.path); the files are \(WebAssets.names.map { "/clients/\($0)" }.joined(separator: ", "))")
            }
            return asset
        },
        Route(method: "GET", template: "/metrics", scope: .admin) { service, request, _ throws(APIError) in
            guard let metrics = service.metrics else { throw .notFound(request.path) }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: metrics.exposition())
        },
    ])

    /// The API's operations, as method and path template.
    package static var operations: [(method: String, template: String)] { routeTable.routes.map { ($0.method, $0.template) } }

    /// The scope each operation needs (nil: open to all), as openapi.yaml's `security` must say.
    package static var operationScopes: [(method: String, template: String, scope: Scope?)] {
        routeTable.routes.map { ($0.method, $0.template, $0.scope) }
    }
}
