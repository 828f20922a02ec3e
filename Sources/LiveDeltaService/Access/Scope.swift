/// What a token's `scope` claim must hold for an operation (RFC 9068 §2.2.3, space-separated).
package enum Scope: String, CaseIterable, Sendable {
    /// `POST /diff`.
    case diff
    /// Reading a session: `GET`, and `/delta`, which commits nothing.
    case sessionsRead = "sessions:read"
    /// Creating, changing and deleting sessions.
    case sessionsWrite = "sessions:write"
    /// Following a session live: event streams and long polls.
    case sessionsSubscribe = "sessions:subscribe"
    /// `GET /metrics`.
    case admin
}
