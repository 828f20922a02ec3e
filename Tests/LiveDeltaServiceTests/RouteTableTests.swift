import MicroHTTP
import Testing

@testable import LiveDeltaService

/// The route table says which requests may wait (and so run on the waiting threads): every
/// request to a session route, by its decoded path, and the readiness check, which asks the
/// store; nothing else.
@Suite struct RouteTableTests {
    static func mayWait(_ method: String, _ path: String) -> Bool {
        LiveDeltaService().mayWait(HTTPRequest(method: method, path: path, headers: [], body: ByteBuffer([])))
    }

    @Test func sessionRoutesAndTheReadinessCheckMayWaitAndNothingElse() {
        for (method, path) in [
            ("POST", "/sessions"), ("GET", "/sessions/a"), ("PUT", "/sessions/a"), ("DELETE", "/sessions/a"),
            ("POST", "/sessions/a/update"), ("POST", "/sessions/a/append"), ("POST", "/sessions/a/changes"),
            ("POST", "/sessions/a/delta"), ("GET", "/sessions/a/events"), ("GET", "/sessions/a/changes"), ("GET", "/ready"),
            // By the template the decoded path matches, and whatever the method (a 405 or a preflight).
            ("POST", "/%73essions/a/update"), ("OPTIONS", "/sessions/a"), ("PATCH", "/sessions/a/update"),
        ] {
            #expect(Self.mayWait(method, path), "\(method) \(path)")
        }
        for (method, path) in [
            ("POST", "/diff"), ("GET", "/health"), ("GET", "/metrics"), ("GET", "/openapi.yaml"), ("GET", "/live/a"),
            ("GET", "/clients/livedelta.js"), ("GET", "/sessionsx"), ("GET", "/nowhere"), ("GET", "/sessions/a/b/c"),
        ] {
            #expect(!Self.mayWait(method, path), "\(method) \(path)")
        }
    }
}
