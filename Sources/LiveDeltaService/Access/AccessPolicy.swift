import MicroHTTP
import TokenAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Who may call what: with a verifier, every operation that names a scope needs a bearer
/// token that verifies, holds the scope and, for a session, reaches its id. Without one
/// (`--auth none`), everyone may call everything, in one namespace.
package struct AccessPolicy: Sendable {
    package let verifier: TokenVerifier?
    /// `WWW-Authenticate`'s realm.
    package var realm: String
    /// The cookie a browser's `EventSource` may carry the token in (it cannot send a header),
    /// honoured on the live routes only, where a request changes nothing.
    package var cookieName: String
    /// The thread the verifier reads its JWK Set again on, where it has one: the policy's to
    /// stop.
    private let keySetThread: ThreadPool?

    package init(
        verifier: TokenVerifier?, keySetThread: ThreadPool? = nil, realm: String = "livedelta", cookieName: String = "livedelta_token"
    ) {
        self.verifier = verifier
        self.keySetThread = keySetThread
        self.realm = realm
        self.cookieName = cookieName
    }

    /// A thread for a verifier's reads of its JWK Set: one read at a time, none queued behind
    /// it (the verifier starts a read only where none is running).
    package static func keySetThread() -> ThreadPool {
        ThreadPool(name: "jwks-refresh", threads: 1, stackSize: 1 << 20, maxQueued: 1)
    }

    /// Stops the thread the JWK Set is read on (after a read running now).
    package func stop() {
        keySetThread?.stop()
    }

    package static let open = AccessPolicy(verifier: nil)

    /// The grant of the request's token where `scope` needs one; nil where the policy is open
    /// or the route names no scope. 401 for a missing or refused token, 403 for a scope it
    /// lacks; why a token was refused goes to `log`, never into the answer.
    func authorize(
        _ request: HTTPRequest, scope: Scope?, cookieAllowed: Bool, log: (TokenRejection) -> Void
    ) throws(APIError) -> TokenGrant? {
        guard let verifier, let scope else { return nil }
        guard let token = bearerToken(request, cookieAllowed: cookieAllowed) else {
            throw unauthorized(error: nil, message: "this operation needs a bearer token (Authorization: Bearer …)")
        }
        switch verifier.verify(token, now: Self.unixNow()) {
        case .failure(let rejection):
            log(rejection)
            throw unauthorized(error: "invalid_token", message: "the bearer token was not accepted")
        case .success(let grant):
            guard grant.scopes.contains(scope.rawValue) else { throw Self.insufficientScope(scope, realm: realm) }
            return grant
        }
    }

    private func bearerToken(_ request: HTTPRequest, cookieAllowed: Bool) -> Substring? {
        if let header = request.header("Authorization") {
            // RFC 6750 §2.1: `Bearer`, in any case, a space, the token. Read as bytes: this
            // runs on every request.
            let bytes = header.utf8
            guard bytes.count > 7, zip(bytes.prefix(7), "bearer ".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
            let token = Substring(header.utf8.dropFirst(7)).trimmingSpaces
            return token.isEmpty ? nil : token
        }
        guard cookieAllowed, let cookies = request.header("Cookie") else { return nil }
        for pair in cookies.split(separator: ";") {
            let trimmed = pair.trimmingSpaces
            guard let equals = trimmed.firstIndex(of: "=") else { continue }
            if trimmed[..<equals] == cookieName {
                let value = trimmed[trimmed.index(after: equals)...]
                return value.isEmpty ? nil : Substring(value)
            }
        }
        return nil
    }

    private func unauthorized(error: String?, message: String) -> APIError {
        var apiError = APIError(.invalidToken, message: message)
        // RFC 6750 §3: no error code where the request carried no token at all.
        apiError.headers = [("WWW-Authenticate", "Bearer realm=\"\(realm)\"" + (error.map { ", error=\"\($0)\"" } ?? ""))]
        return apiError
    }

    static func insufficientScope(_ scope: Scope, realm: String) -> APIError {
        var error = APIError(.insufficientScope, message: "the token's scope does not hold \(scope.rawValue), which this operation needs")
        error.headers = [("WWW-Authenticate", "Bearer realm=\"\(realm)\", error=\"insufficient_scope\", scope=\"\(scope.rawValue)\"")]
        return error
    }

    /// Seconds since 1970, as tokens count time.
    package static func unixNow() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec)
    }
}
