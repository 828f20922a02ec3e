import MicroHTTP

/// Which web origins may call the API from a browser (`--cors-origins`), and the headers that
/// tell the browser so. Off by default: without origins no answer carries a CORS header.
///
/// An origin not listed gets no CORS header at all, and otherwise the same answer: the browser
/// then keeps the answer from the page, which is the refusal. Tokens are unchanged by CORS: a
/// listed origin still needs a token where `--auth` asks for one; only the live routes, which
/// take the token from a cookie, allow credentials, and only for origins listed by name (a
/// wildcard never allows them, as the Fetch standard requires).
package struct CORSPolicy: Sendable, Equatable {
    package enum Origins: Sendable, Equatable {
        /// No CORS headers on any answer.
        case none
        /// Any origin, without credentials.
        case any
        /// These origins exactly (scheme, host and port, as a browser's `Origin` spells them).
        case listed(Set<String>)
    }

    package let origins: Origins

    /// The headers a page may send (beyond the safelisted ones), as a preflight allows them.
    static let allowedHeaders = "Content-Type, Authorization, If-Match, Idempotency-Key, Last-Event-ID, X-Request-Id"
    /// The headers a page may read (beyond the safelisted ones).
    static let exposedHeaders = "ETag, Location, Retry-After, Idempotent-Replayed, X-Request-Id"
    /// How long a browser may keep a preflight's answer, in seconds.
    static let preflightMaxAge = "600"

    package static let off = CORSPolicy(origins: .none)

    package init(origins: Origins) {
        self.origins = origins
    }

    /// `--cors-origins` as given: `*`, or comma-separated origins such as
    /// `https://app.example.com,http://localhost:3000`; empty turns CORS off. Throws a message
    /// naming what is wrong with an entry.
    package init(parsing text: String) throws(CORSPolicyError) {
        let entries = text.split(separator: ",").map { String($0.trimmingSpaces) }.filter { !$0.isEmpty }
        if entries.isEmpty {
            self.init(origins: .none)
            return
        }
        if entries == ["*"] {
            self.init(origins: .any)
            return
        }
        for entry in entries {
            guard entry != "*" else { throw CORSPolicyError(message: "`*` cannot be listed with other origins; give it alone or list origins") }
            guard Self.isOrigin(entry) else {
                throw CORSPolicyError(
                    message:
                        "\(entry) is not an origin: give scheme, host and optional port, such as https://app.example.com (no path, no trailing slash)"
                )
            }
        }
        self.init(origins: .listed(Set(entries)))
    }

    /// Whether `text` reads as a serialized origin: `http` or `https`, `://`, a host, an optional
    /// port, and nothing after.
    private static func isOrigin(_ text: String) -> Bool {
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == "http" || parts[0] == "https" else { return false }
        let rest = parts[1]
        return !rest.isEmpty && !rest.contains("/") && !rest.contains("?") && !rest.contains("#") && !rest.contains("@")
            && !rest.contains(" ") && !rest.hasSuffix(":")
    }

    var isOn: Bool { origins != .none }

    /// What `Access-Control-Allow-Origin` says to a request from `origin`; nil where the origin
    /// may not read the answer.
    private func allowedOrigin(_ origin: String?) -> (value: String, named: Bool)? {
        guard let origin else { return nil }
        switch origins {
        case .none: return nil
        case .any: return ("*", false)
        case .listed(let listed): return listed.contains(origin) ? (origin, true) : nil
        }
    }

    /// The headers an answer to `request` gains; `credentials`: whether the route takes a cookie.
    func headers(for request: HTTPRequest, credentials: Bool) -> [(name: String, value: String)] {
        guard isOn else { return [] }
        // A list makes the answer depend on the origin, whoever asks: a shared cache must not
        // give one origin's answer to another.
        var headers: [(name: String, value: String)] = origins == .any ? [] : [("Vary", "Origin")]
        guard let (value, named) = allowedOrigin(request.header("Origin")) else { return headers }
        headers.append(("Access-Control-Allow-Origin", value))
        headers.append(("Access-Control-Expose-Headers", Self.exposedHeaders))
        if credentials && named { headers.append(("Access-Control-Allow-Credentials", "true")) }
        return headers
    }

    /// The answer to `OPTIONS` on a route whose methods are `methods`: a 204 with `Allow`, and,
    /// for an allowed origin asking as a preflight does, what it may send.
    func preflight(_ request: HTTPRequest, methods: [String], credentials: Bool) -> HTTPResponse {
        var response = HTTPResponse(status: 204, headers: [("Allow", methods.joined(separator: ", "))])
        var headers = self.headers(for: request, credentials: credentials)
        if request.header("Access-Control-Request-Method") != nil, headers.contains(where: { $0.name == "Access-Control-Allow-Origin" }) {
            headers.removeAll { $0.name == "Access-Control-Expose-Headers" }
            headers.append(("Access-Control-Allow-Methods", methods.joined(separator: ", ")))
            headers.append(("Access-Control-Allow-Headers", Self.allowedHeaders))
            headers.append(("Access-Control-Max-Age", Self.preflightMaxAge))
        }
        response.headers += headers
        return response
    }
}

/// Why `--cors-origins` cannot be read.
package struct CORSPolicyError: Error, Sendable, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}
