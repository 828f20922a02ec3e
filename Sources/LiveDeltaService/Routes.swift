import MicroHTTP

/// One operation of the API: a method on a path template (`/sessions/{id}/update`), and what
/// answers it. The template is also the label its requests are counted under.
struct Route: Sendable {
    let method: String
    let template: String
    let handler: @Sendable (LiveDeltaService, HTTPRequest, RouteParameters) throws(APIError) -> HTTPResponse
}

/// The path segments a template's `{name}`s matched, as sent (not yet checked).
struct RouteParameters: Sendable {
    private var values: [(name: Substring, value: Substring)] = []

    mutating func append(_ name: Substring, _ value: Substring) { values.append((name, value)) }

    subscript(_ name: String) -> Substring { values.first { $0.name == name }?.value ?? "" }
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

    init(_ routes: [Route]) {
        self.routes = routes
        var seen = Set<String>()
        templates = routes.compactMap { route in
            guard seen.insert(route.template).inserted else { return nil }
            return (route.template, route.template.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { $0 })
        }
        let parameterised = Set(templates.filter { $0.template.contains("{") }.map(\.segments.count))
        exact = Dictionary(
            templates.filter { !$0.template.contains("{") && !parameterised.contains($0.segments.count) }.map { ($0.template, $0.template) },
            uniquingKeysWith: { first, _ in first })
    }

    /// The template a path matches, and its parameters; nil where none does.
    func match(_ path: String) -> (template: String, parameters: RouteParameters)? {
        if let template = exact[path] { return (template, RouteParameters()) }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
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

    /// The methods a template takes, as `Allow` lists them.
    func methods(of template: String) -> [String] {
        routes.filter { $0.template == template }.flatMap { $0.method == "GET" ? ["GET", "HEAD"] : [$0.method] }
    }

    /// Answers the request by the route its path (`matched`, as `match` found it) and method
    /// name: 404 where no template matches, 405 with `Allow` where the template takes other
    /// methods.
    func respond(
        to request: HTTPRequest, matched: (template: String, parameters: RouteParameters)?, in service: LiveDeltaService
    ) throws(APIError) -> HTTPResponse {
        guard let (template, parameters) = matched else { throw .notFound(request.path) }
        let method = request.method == "HEAD" ? "GET" : request.method
        guard let route = routes.first(where: { $0.template == template && $0.method == method }) else {
            throw .methodNotAllowed(request.method, request.path, allowed: methods(of: template))
        }
        return try route.handler(service, request, parameters)
    }
}

extension LiveDeltaService {
    /// Every route of the API.
    static let routeTable = RouteTable([
        Route(method: "POST", template: "/diff") { service, request, _ throws(APIError) in
            try requireJSON(request)
            return .json(try DiffEndpoint.respond(to: request.body, limits: service.limits, metrics: service.metrics))
        },
        Route(method: "POST", template: "/sessions") { service, request, _ throws(APIError) in
            try service.sessionEndpoints.create(request, id: SessionEndpoints.newID())
        },
        Route(method: "GET", template: "/sessions/{id}") { service, _, parameters throws(APIError) in
            try service.sessionEndpoints.show(id: SessionEndpoints.validID(parameters["id"]))
        },
        Route(method: "PUT", template: "/sessions/{id}") { service, request, parameters throws(APIError) in
            try service.sessionEndpoints.create(request, id: SessionEndpoints.validID(parameters["id"]))
        },
        Route(method: "DELETE", template: "/sessions/{id}") { service, request, parameters throws(APIError) in
            try service.sessionEndpoints.delete(request, id: SessionEndpoints.validID(parameters["id"]))
        },
        Route(method: "POST", template: "/sessions/{id}/update") { service, request, parameters throws(APIError) in
            try service.sessionEndpoints.change(request, id: SessionEndpoints.validID(parameters["id"]), action: .update)
        },
        Route(method: "POST", template: "/sessions/{id}/append") { service, request, parameters throws(APIError) in
            try service.sessionEndpoints.change(request, id: SessionEndpoints.validID(parameters["id"]), action: .append)
        },
        Route(method: "POST", template: "/sessions/{id}/delta") { service, request, parameters throws(APIError) in
            try service.sessionEndpoints.change(request, id: SessionEndpoints.validID(parameters["id"]), action: .delta)
        },
        Route(method: "GET", template: "/sessions/{id}/events") { service, request, parameters throws(APIError) in
            try service.liveEndpoints.events(request, id: SessionEndpoints.validID(parameters["id"]))
        },
        Route(method: "GET", template: "/sessions/{id}/changes") { service, request, parameters throws(APIError) in
            try service.liveEndpoints.changes(request, id: SessionEndpoints.validID(parameters["id"]))
        },
        Route(method: "GET", template: "/health") { _, _, _ throws(APIError) in
            .json(Array(#"{"status":"ok"}"#.utf8))
        },
        Route(method: "GET", template: "/ready") { service, _, _ throws(APIError) in
            guard service.sessions.isReady else {
                var error = APIError(.sessionStoreUnavailable, message: "the session store cannot be reached just now")
                error.headers = [("Retry-After", "1")]
                throw error
            }
            return .json(Array(#"{"status":"ready"}"#.utf8))
        },
        Route(method: "GET", template: "/openapi.yaml") { _, _, _ throws(APIError) in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], body: Array(OpenAPISpec.yaml.utf8))
        },
        Route(method: "GET", template: "/live/{id}") { _, _, parameters throws(APIError) in
            // The id is checked here as everywhere; the page reads it from its own address.
            _ = try SessionEndpoints.validID(parameters["id"])
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")], body: Array(LivePage.html.utf8))
        },
        Route(method: "GET", template: "/clients/livedelta.js") { _, _, _ throws(APIError) in
            HTTPResponse(
                status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "no-cache")],
                body: Array(LivePageModule.javascript.utf8))
        },
        Route(method: "GET", template: "/metrics") { service, request, _ throws(APIError) in
            guard let metrics = service.metrics else { throw .notFound(request.path) }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: metrics.exposition())
        },
    ])

    /// The API's operations, as method and path template.
    public static var operations: [(method: String, template: String)] { routeTable.routes.map { ($0.method, $0.template) } }
}
