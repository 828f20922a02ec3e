import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An answer that is not a success, with the server's error code, message and pointer.
public struct LiveDeltaError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status; 0 where the connection failed or no answer came.
    public var status: Int
    /// The server's code (`version_mismatch`, `session_not_found`, ...), or `network_error`.
    public var code: String
    /// What was wrong, and how to fix it, as the server says it.
    public var message: String
    /// A JSON Pointer into the body sent, where the server gave one.
    public var pointer: String?
    /// Seconds the server asked to wait (`Retry-After`).
    public var retryAfter: Double?
    /// The write's Idempotency-Key, to send the same write again later.
    public var idempotencyKey: String?

    /// An error with the server's status, code and message.
    public init(status: Int, code: String, message: String, pointer: String? = nil, retryAfter: Double? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.pointer = pointer
        self.retryAfter = retryAfter
    }

    /// Whether trying again later may succeed: no connection, a timeout, a busy or failing
    /// server (0, 408, 429, 5xx). Anything else fails the same way every time.
    public var isTransient: Bool { status == 0 || status == 408 || status == 429 || status >= 500 }

    /// `status code: message`.
    public var description: String { "\(status) \(code): \(message)" }
}

/// A LiveDelta server: every call of the API with `Codable` items, `If-Match`, and an
/// `Idempotency-Key` on every write (the same on its retries), so that a write whose answer was
/// lost is sent again safely: the server answers the retry with the first answer.
public final class LiveDeltaClient: Sendable {
    /// Gives the bearer token to send; called again with `refresh: true` after a 401.
    public typealias TokenProvider = @Sendable (_ refresh: Bool) async throws -> String?

    /// The server, such as `https://deltas.example.com`.
    public let baseURL: URL
    let session: URLSession
    let tokens: TokenStore
    /// Tries after the first, for a lost connection, a 408/429/503, or a keyed write's 504.
    public let retries: Int
    /// Seconds a session write (which carries its key) waits for its answer before it is sent
    /// again. A connection can stay open with its answer lost (a proxy that dropped it holds the
    /// connection until the server closes its own, 10 s later by default); the key makes a
    /// retry safe, and the server answers it with the first answer, or waits for the first.
    /// `/diff` and `/delta`, which commit nothing and keep no answer, wait as `session` does.
    public let writeTimeout: TimeInterval

    /// A client of the server at `baseURL`, through `session` (its configuration serves the live streams too).
    public init(baseURL: URL, session: URLSession = .shared, retries: Int = 2, writeTimeout: TimeInterval = 5, token: TokenProvider? = nil) {
        self.baseURL = baseURL
        self.session = session
        self.retries = retries
        self.writeTimeout = writeTimeout
        tokens = TokenStore(provider: token)
    }

    /// What a call sends: its method, path, query, body and condition.
    public struct Call: Sendable {
        /// The HTTP method.
        public var method: String
        /// The path, such as `/sessions/feed-42/update`.
        public var path: String
        /// Query parameters (`format`, `changes`).
        public var query: [URLQueryItem] = []
        /// The body, JSON.
        public var body: Data?
        /// The body's type (`application/json-patch+json` for a patch).
        public var contentType = "application/json"
        /// `If-Match`, as the header spells it (`"3"`).
        public var ifMatch: String?
        /// A write's key; a new UUID where nil.
        public var idempotencyKey: String?

        /// A call of `method` on `path`.
        public init(method: String, path: String, query: [URLQueryItem] = [], body: Data? = nil) {
            self.method = method
            self.path = path
            self.query = query
            self.body = body
        }
    }

    func url(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.percentEncodedPath = components.percentEncodedPath.replacingOccurrences(of: "/$", with: "", options: .regularExpression) + path
        if !query.isEmpty { components.queryItems = query }
        return components.url!
    }

    static func sessionPath(_ id: String, _ route: String = "") -> String {
        "/sessions/" + (id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? id) + route
    }

    /// Sends `call`: the token (asked again once after a 401), a key on writes, retries with a
    /// jittered back-off (`Retry-After` as a floor) where the connection failed, the server
    /// refused before doing anything (408, 429, 503), or it cannot tell whether a write took
    /// effect (504 `outcome_unknown`: retried only with the call's key, which answers the
    /// retry). Returns the answer's status, headers and body.
    public func send(_ call: Call) async throws -> (status: Int, headers: [String: String], body: Data) {
        var call = call
        if call.method != "GET" && call.method != "HEAD" && call.idempotencyKey == nil { call.idempotencyKey = UUID().uuidString }
        var refreshed = false
        var attempt = 0
        while true {
            var request = URLRequest(url: url(call.path, query: call.query))
            request.httpMethod = call.method
            request.httpBody = call.body
            if call.idempotencyKey != nil, call.path.hasPrefix("/sessions"), !call.path.hasSuffix("/delta") { request.timeoutInterval = writeTimeout }
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            if call.body != nil { request.setValue(call.contentType, forHTTPHeaderField: "Content-Type") }
            if let ifMatch = call.ifMatch { request.setValue(ifMatch, forHTTPHeaderField: "If-Match") }
            if let key = call.idempotencyKey { request.setValue(key, forHTTPHeaderField: "Idempotency-Key") }
            if let token = try await tokens.token(refresh: false) { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            let data: Data
            let response: HTTPURLResponse
            do {
                let (body, answer) = try await session.data(for: request)
                guard let http = answer as? HTTPURLResponse else { throw URLError(.badServerResponse) }
                (data, response) = (body, http)
            } catch {
                var failure = LiveDeltaError(status: 0, code: "network_error", message: "\(call.method) \(call.path): \(error.localizedDescription)")
                failure.idempotencyKey = call.idempotencyKey
                guard attempt < retries, !(error is CancellationError) else { throw failure }
                try await Backoff.sleep(Backoff.delay(attempt: attempt, first: 0.25, most: 4))
                attempt += 1
                continue
            }
            if response.statusCode == 401, tokens.hasProvider, !refreshed {
                refreshed = true
                _ = try await tokens.token(refresh: true)
                continue
            }
            guard (200..<300).contains(response.statusCode) else {
                var failure = Self.error(status: response.statusCode, headers: response, body: data)
                failure.idempotencyKey = call.idempotencyKey
                let nothingDone = [408, 429, 503].contains(response.statusCode)
                let unknown = response.statusCode == 504 && (call.idempotencyKey != nil || call.method == "GET" || call.method == "HEAD")
                if nothingDone || unknown, attempt < retries {
                    try await Backoff.sleep(max(Backoff.delay(attempt: attempt, first: 0.25, most: 4), failure.retryAfter ?? 0))
                    attempt += 1
                    continue
                }
                throw failure
            }
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            return (response.statusCode, headers, data)
        }
    }

    static func error(status: Int, headers: HTTPURLResponse, body: Data) -> LiveDeltaError {
        let detail = try? JSONDecoder().decode(ErrorAnswer.self, from: body).error
        return LiveDeltaError(
            status: status, code: detail?.code ?? "http_\(status)", message: detail?.message ?? "HTTP \(status)", pointer: detail?.pointer,
            retryAfter: (headers.value(forHTTPHeaderField: "Retry-After")).flatMap(Double.init))
    }

    func decoded<T: Decodable>(_ type: T.Type, _ call: Call) async throws -> T {
        let (_, _, body) = try await send(call)
        return try JSONDecoder().decode(T.self, from: body)
    }

    /// Bodies with their members in one order: the same write encoded twice is the same bytes,
    /// as the server's Idempotency-Key check compares them (a dictionary's order, and so a
    /// plain JSONEncoder's, differs from one instance to the next).
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    static func body(_ members: [String: any Encodable]) throws -> Data {
        struct Members: Encodable {
            var members: [String: any Encodable]
            struct Key: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                for (name, value) in members { try container.encode(value, forKey: Key(stringValue: name)) }
            }
        }
        return try encoder.encode(Members(members: members))
    }
}

/// An error answer's body.
struct ErrorAnswer: Decodable {
    struct Detail: Decodable {
        var code: String
        var message: String
        var pointer: String?
    }
    var error: Detail
}

/// The token, kept while it is taken, asked again after a refusal.
final class TokenStore: Sendable {
    let provider: LiveDeltaClient.TokenProvider?
    private let current = Locked<String?>(nil)

    init(provider: LiveDeltaClient.TokenProvider?) { self.provider = provider }

    var hasProvider: Bool { provider != nil }

    func token(refresh: Bool) async throws -> String? {
        guard let provider else { return nil }
        if !refresh, let token = current.value { return token }
        let token = try await provider(refresh)
        current.value = token
        return token
    }
}

/// A jittered exponential back-off, in seconds: half to all of `first` for attempt 0,
/// doubling, at most `most`.
enum Backoff {
    static func delay(attempt: Int, first: TimeInterval, most: TimeInterval) -> TimeInterval {
        let ceiling = min(most, first * Double(1 << min(attempt, 20)))
        return ceiling / 2 + ceiling / 2 * Double.random(in: 0...1)
    }

    static func sleep(_ seconds: TimeInterval) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
    }
}
