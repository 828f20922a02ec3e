import ByteJSON
import MicroHTTP
import Synchronization

/// Where a subscriber's events go: an event stream, or one long-poll answer.
protocol LiveSink: AnyObject, Sendable {
    /// Sends events that bring the subscriber to the place `token` resumes from; false where
    /// the sink is gone or done (the subscriber is then dropped).
    func send(_ events: [LiveEvent], reaching token: String?) -> Bool
    /// Ends the sink after what it was sent (`events` last).
    func finish(with events: [LiveEvent])
    /// Called about once a second: a stream sends a heartbeat when idle, a poll answers empty
    /// at its deadline. False where the sink is gone or done.
    func tick(now: Int64, token: String?) -> Bool
    /// Whether `tick` at `now` may send an event that carries the subscriber's token (an
    /// expiry, a poll's empty answer): only then is the token spelled for it.
    func needsToken(now: Int64) -> Bool
    /// Sends an event that is no step of the session (it moves no subscriber, and has no id)
    /// where the sink can send one between steps: a stream can, a poll answers steps only.
    func notice(_ event: LiveEvent)
}

extension LiveSink {
    func notice(_ event: LiveEvent) {}
}

/// One subscriber of a feed. Its place is kept under the feed's lock.
final class LiveSubscriber: Sendable {
    let spelling: LiveSpelling
    let sink: any LiveSink
    /// The last entry of the feed's log this subscriber has been given (by sequence).
    // nonisolated(unsafe): read and written only under the feed's lock.
    nonisolated(unsafe) var delivered: UInt64 = 0
    /// Where its events have brought it; nil before its first.
    // nonisolated(unsafe): read and written only under the feed's lock.
    nonisolated(unsafe) var position: LivePosition?

    /// The rows it follows; nil for the whole session.
    let window: WindowRequest?
    /// Where its window is at `position`, and what it was told of it.
    // nonisolated(unsafe): read and written only under the feed's lock.
    nonisolated(unsafe) var placed: WindowState?

    init(spelling: LiveSpelling, sink: any LiveSink, window: WindowRequest? = nil) {
        self.spelling = spelling
        self.sink = sink
        self.window = window
    }

    /// Takes what passes moved its window to without a word (`WindowSlots`): the window at
    /// `version`, and since when a total waits (under the feed's lock).
    func catchUp(to window: PlacedWindow, version: UInt64, pendingSince: Int64?) {
        placed?.window = window
        placed?.pendingSince = pendingSince
        if let incarnation = position?.incarnation { position = LivePosition(incarnation: incarnation, version: version) }
    }

    /// The token its client resumes from: its position, and its window's rows there.
    var token: String? { Self.token(at: position, placed) }

    /// The token of a subscriber at `position` whose window is `placed` (nil: the whole session).
    static func token(at position: LivePosition?, _ placed: WindowState?) -> String? {
        guard let position else { return nil }
        guard let placed else { return position.token }
        return WindowToken(position: LivePosition(incarnation: position.incarnation, version: placed.told), rows: placed.toldRows).token
    }
}

/// A windowed subscriber's window, as the feed moves it along the steps.
struct WindowState: Sendable {
    var window: PlacedWindow
    /// The version its client was last sent: a step that changes nothing in the window is
    /// not sent on its own, only the total, at most once a second (`pendingSince`).
    var told: UInt64
    /// The rows it held then.
    var toldRows: Range<Int>
    /// When the window first changed in nothing but its place or total since it was last told
    /// (monotonic nanoseconds); nil where it was told everything.
    var pendingSince: Int64?
    /// When it was last sent such a total alone, or when it joined (monotonic nanoseconds).
    var lastTotal: Int64
    /// A keyset window's anchor's id (JSON text), to find it again after a reset.
    var anchorID: String?

    /// Totals alone go at most once a second.
    static let totalInterval: Int64 = 1_000_000_000

    /// Whether a total is waiting and may be sent now.
    func isDue(_ now: Int64) -> Bool { now >= totalDue }

    /// When the total waiting may be sent; `.max` where none is.
    var totalDue: Int64 { Self.totalDue(pendingSince: pendingSince, lastTotal: lastTotal) }

    /// When a total pending since `pendingSince` (nil: none), the last sent at `lastTotal`,
    /// may be sent: the one rule for a subscriber's place and its slot (`WindowSlots`). A
    /// second after the last at the earliest, and always a whole number of seconds after it:
    /// each window keeps to a beat of its own, set when it joined, so the totals of thousands
    /// of windows a commit passes by go out spread over the second, a few each tick, not all
    /// in one pass that holds up the next commit's deltas.
    static func totalDue(pendingSince: Int64?, lastTotal: Int64) -> Int64 {
        guard let pendingSince else { return .max }
        let beats = max(1, (pendingSince - lastTotal + totalInterval - 1) / totalInterval)
        return lastTotal + beats * totalInterval
    }
}

/// Events as `text/event-stream` on an HTTP stream, with comment heartbeats while idle.
final class EventStreamSink: LiveSink {
    let stream: HTTPStream
    private let heartbeat: Int64
    private let lastWrite = Atomic<Int64>(0)
    /// When the subscriber's token expires (monotonic); nil where tokens are not checked.
    private let expiry: Int64?

    init(stream: HTTPStream, heartbeatSeconds: Int, now: Int64, expiry: Int64? = nil) {
        self.stream = stream
        heartbeat = Int64(heartbeatSeconds) * 1_000_000_000
        self.expiry = expiry
        lastWrite.store(now, ordering: .relaxed)
    }

    func send(_ events: [LiveEvent], reaching token: String?) -> Bool {
        guard !events.isEmpty else { return stream.isOpen }
        // Each event goes as it was rendered, shared with every stream it goes to, not copied.
        lastWrite.store(monotonicNow(), ordering: .relaxed)
        return stream.write(events.map(\.serverSent))
    }

    func finish(with events: [LiveEvent]) {
        _ = send(events, reaching: nil)
        stream.close()
    }

    func notice(_ event: LiveEvent) { _ = send([event], reaching: nil) }

    func needsToken(now: Int64) -> Bool { expiry.map { now >= $0 } ?? false }

    func tick(now: Int64, token: String?) -> Bool {
        guard stream.isOpen else { return false }
        if let expiry, now >= expiry {
            // Said, not a silent cut: the client reconnects with a new token and resumes from
            // this id, losing nothing.
            finish(with: [LiveEvent(name: .expired, id: token, data: Array(#"{"reason":"token_expired"}"#.utf8))])
            return false
        }
        guard now - lastWrite.load(ordering: .relaxed) >= heartbeat else { return true }
        lastWrite.store(now, ordering: .relaxed)
        return stream.write([Self.heartbeat])
    }

    private static let heartbeat = StreamBytes(Array(": keep-alive\n\n".utf8))
}

/// One long-poll answer: `{"events": [...], "next": token}`, written once, with the first
/// events or with none at the deadline.
final class LongPollSink: LiveSink {
    let stream: HTTPStream
    private let deadline: Int64
    private let done = Atomic<Bool>(false)

    init(stream: HTTPStream, deadline: Int64) {
        self.stream = stream
        self.deadline = deadline
    }

    func send(_ events: [LiveEvent], reaching token: String?) -> Bool {
        guard !events.isEmpty else { return !done.load(ordering: .relaxed) && stream.isOpen }
        answer(events, next: token)
        return false
    }

    func finish(with events: [LiveEvent]) { answer(events, next: nil) }

    func needsToken(now: Int64) -> Bool { now >= deadline }

    func tick(now: Int64, token: String?) -> Bool {
        guard now >= deadline else { return !done.load(ordering: .relaxed) && stream.isOpen }
        answer([], next: token)
        return false
    }

    /// The answer is written as parts: each event as its feed rendered it for every poll,
    /// shared, between a few bytes of this poll's own.
    private func answer(_ events: [LiveEvent], next: String?) {
        guard !done.exchange(true, ordering: .relaxed) else { return }
        var parts = [Self.opening]
        for (index, event) in events.enumerated() {
            if index > 0 { parts.append(Self.comma) }
            parts.append(event.pollListed)
        }
        var writer = JSONWriter()
        writer.raw("],\"next\":")
        if let next { writer.string(next) } else { writer.raw("null") }
        writer.raw("}")
        parts.append(StreamBytes(writer.bytes))
        stream.write(parts)
        stream.close()
    }

    private static let opening = StreamBytes(Array("{\"events\":[".utf8))
    private static let comma = StreamBytes([UInt8(ascii: ",")])
}
