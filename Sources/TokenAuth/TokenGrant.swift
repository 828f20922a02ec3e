/// What a verified token lets its bearer do.
package struct TokenGrant: Sendable, Equatable {
    /// Whose sessions it reaches: the tenant claim's value.
    package var tenant: String
    /// The `scope` claim's words (RFC 9068 §2.2.3).
    package var scopes: Set<String>
    /// Glob patterns (`*`, `?`) the session ids it reaches must match; nil for any id.
    package var sessions: [String]?
    /// Its `exp`, seconds since 1970.
    package var expires: Int64
    /// Its `sub`, for logs.
    package var subject: String?

    package init(tenant: String, scopes: Set<String>, sessions: [String]?, expires: Int64, subject: String?) {
        self.tenant = tenant
        self.scopes = scopes
        self.sessions = sessions
        self.expires = expires
        self.subject = subject
    }

    /// Whether the token reaches the session `id` (of its own tenant).
    package func reaches(session id: String) -> Bool {
        guard let sessions else { return true }
        return sessions.contains { globMatches(Array($0.utf8)[...], Array(id.utf8)[...]) }
    }
}

/// `*` any run of characters (none included), `?` one character, anything else itself.
func globMatches(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
    var p = pattern.startIndex, t = text.startIndex
    // Where the last `*` was, and the text position it has taken up to: backtracking to it
    // is enough (each `*` only ever needs to take more), so the match is linear in practice
    // and never exponential.
    var star: (pattern: Int, text: Int)?
    while t < text.endIndex {
        if p < pattern.endIndex && (pattern[p] == UInt8(ascii: "?") || pattern[p] == text[t]) {
            p += 1
            t += 1
        } else if p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") {
            star = (p, t)
            p += 1
        } else if let last = star {
            p = last.pattern + 1
            t = last.text + 1
            star = (last.pattern, last.text + 1)
        } else {
            return false
        }
    }
    while p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") { p += 1 }
    return p == pattern.endIndex
}
