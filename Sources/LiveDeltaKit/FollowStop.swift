import Foundation

/// Why following a session stopped: `LiveList.follow` returns it (or throws the error behind
/// it) and `connection` becomes `.stopped` with it, so a screen can say which.
public enum FollowStop: Sendable, Equatable, CustomStringConvertible {
    /// The session was deleted.
    case deleted
    /// The session was idle past its timeout, and the server let it go.
    case expired
    /// The server let the session go to make room (`--max-sessions`, `--max-session-bytes`).
    case evicted
    /// The server ended it for a reason this client does not know yet, as the server named it.
    case ended(reason: String)
    /// The app stopped following (the task was cancelled).
    case cancelled
    /// The server refused to go on, and asking again would not change it: access lost (401
    /// after a fresh token, 403), no such session (404), a window it cannot have (400, 409).
    case refused(status: Int, code: String, message: String)
    /// An event the app's `Item` type cannot take (`FollowOptions.undecodable` says what then).
    case undecodable(UndecodableEvent)

    /// The end an `end` event names.
    init(serverReason reason: String) {
        switch reason {
        case "deleted": self = .deleted
        case "expired": self = .expired
        case "evicted": self = .evicted
        default: self = .ended(reason: reason)
        }
    }

    /// Why, as a sentence for a screen.
    public var description: String {
        switch self {
        case .deleted: "the session was deleted"
        case .expired: "the session expired"
        case .evicted: "the server evicted the session"
        case .ended(let reason): "the session ended (\(reason))"
        case .cancelled: "following was cancelled"
        case .refused(let status, let code, let message): "the server refused (\(status) \(code)): \(message)"
        case .undecodable(let event): event.description
        }
    }
}

/// An event (or read) whose data the app's `Item` type cannot decode: a missing field, a
/// `null` item, a number or string Foundation cannot hold. Sent again it would fail again,
/// so it is never asked for again.
public struct UndecodableEvent: Error, Sendable, Equatable, CustomStringConvertible {
    /// The session followed.
    public var session: String
    /// The event's type (`reset`, `delta`, `window`), `read` for a read of the session, or
    /// `changes` for a long poll's page.
    public var event: String
    /// The version the event brings, where it could be read.
    public var version: Int?
    /// The event's id (a resume token).
    public var eventID: String?
    /// What did not decode, and where.
    public var reason: String

    /// An undecodable event, as a follower reports it (and a test double of one).
    public init(session: String, event: String, version: Int?, eventID: String?, reason: String) {
        self.session = session
        self.event = event
        self.version = version
        self.eventID = eventID
        self.reason = reason
    }

    /// What happened, naming the session, the event and its version.
    public var description: String {
        let at = version.map { " at version \($0)" } ?? ""
        return "session \(session): the \(event)\(at) could not be decoded: \(reason)"
    }

    /// The reason a decoding error gives, with the path to the value (`items[3].title`).
    static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        func path(_ context: DecodingError.Context, _ last: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (last.map { [$0] } ?? [])
            let text = keys.reduce("") { text, key in
                key.intValue.map { "\(text)[\($0)]" } ?? (text.isEmpty ? key.stringValue : "\(text).\(key.stringValue)")
            }
            return text.isEmpty ? "the event" : text
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context, key)) is missing"
        case .valueNotFound(let type, let context): return "\(path(context)) is null where \(type) is needed"
        case .typeMismatch(let type, let context): return "\(path(context)) is not \(type): \(context.debugDescription)"
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        @unknown default: return String(describing: error)
        }
    }
}

/// What a follower does with an event its `Item` type cannot decode.
public enum UndecodablePolicy: Sendable, Equatable {
    /// Stop following and throw `FollowEnd.undecodable` (`LiveList.follow` throws it).
    case stop
    /// Reconnect for the session whole, a reset, which is taken where it decodes (the item may
    /// be gone by then); one that does not either stops as `.stop` would.
    case readAfresh
}
