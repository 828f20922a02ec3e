import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What following a session gives, in order.
public enum LiveUpdate<Item: Codable & Sendable>: Sendable {
    /// The session whole: replace what is shown. `reason` says why (`start`, `reset` by the
    /// server, or the cause of a fresh read: a gap, a version without a delta).
    case reset(SessionState<Item>, reason: String)
    /// One version: its `baseVersion` is the version given before.
    case delta(DeltaEvent<Item>)
    /// A window's rows are unchanged at a new version: where they are, or the total, changed.
    case window(WindowEvent)
    /// The connection's state, for the screen.
    case connection(ConnectionState)
}

/// Where a follower's connection is.
public enum ConnectionState: Sendable, Equatable {
    case connecting
    case live
    /// Waiting `delay` seconds before the next try, after `reason`.
    case reconnecting(delay: TimeInterval, reason: String)
    /// Following ended, and why: no more updates come.
    case stopped(FollowStop)
}

/// How a follower connects.
public struct FollowOptions: Sendable {
    /// Server-sent events, or long polls where streams do not get through.
    public enum Transport: Sendable { case events, longPoll }
    /// How versions arrive.
    public var transport: Transport = .events
    /// Seconds without a byte after which a stream is dropped and opened again (the server's
    /// heartbeat comes every 15).
    public var heartbeatTimeout: TimeInterval = 45
    /// The back-off's first and longest delays, in seconds.
    public var minDelay: TimeInterval = 1
    /// The back-off's longest delay, in seconds.
    public var maxDelay: TimeInterval = 32
    /// A resume token (an event id) kept from before.
    public var since: String?
    /// Seconds a long poll waits.
    public var pollWait = 20
    /// Follow these rows alone (`LiveList.moveWindow` scrolls).
    public var window: Window?
    /// What each delta of a flat session carries besides the delta: the new list whole
    /// (`.all`, `DeltaEvent.items`), or only the rows it inserts or changes (`.changed`,
    /// `DeltaEvent.rows`), the fewest bytes for a long list or a scrolling window. Nil: a
    /// `LiveList` asks for `.changed` and puts the rows in place itself; `follow` for `.all`.
    public var rows: CarriedRows?
    /// What to do with an event the `Item` type cannot decode: stop (the default), or read
    /// the session afresh. Never ask for it again: the server would send the same bytes.
    public var undecodable: UndecodablePolicy = .stop

    /// The defaults: events, a 45 s watchdog, back-off from 1 s to 32 s.
    public init() {}
}

/// What a delta event carries besides the delta (`FollowOptions.rows`).
public enum CarriedRows: String, Sendable {
    /// The collection after it whole: `items` (or `sections`).
    case all
    /// Only the rows a flat session's delta inserts or changes: `rows`, at its insertions,
    /// then at its reloads' targets (a sectioned session's deltas carry `sections` whole).
    case changed
}

/// Why following ended.
public enum FollowEnd: Error, Sendable, Equatable {
    /// The session went: `deleted`, `expired` or `evicted`.
    case ended(reason: String)
    /// An event the `Item` type cannot decode (`FollowOptions.undecodable` is `.stop`, or a
    /// fresh read did not decode either).
    case undecodable(UndecodableEvent)
}

extension LiveDeltaClient {
    /// Follows a session's versions in the `batch` format (each delta carries the new
    /// collection): server-sent events over URLSession's data delegate, or long polls. Resumes
    /// by the last event id after any disconnect; backs off with jitter (`Retry-After` as a
    /// floor); drops a stream silent past `heartbeatTimeout`; asks for a new token once after a
    /// 401. Never gives a version twice, or a delta that does not start at the version given
    /// before: a gap, or a version without a delta, is a fresh read given as a reset. Ends by
    /// throwing `FollowEnd.ended` when the session goes, `FollowEnd.undecodable` for an event
    /// `Item` cannot take, or a `LiveDeltaError` that retrying cannot fix (no such session, a
    /// refused token), each after a `.connection(.stopped(...))` saying so; cancel the
    /// consuming task to stop.
    public func follow<Item: Codable & Sendable>(_ id: String, as type: Item.Type = Item.self, options: FollowOptions = FollowOptions())
        -> AsyncThrowingStream<LiveUpdate<Item>, any Error>
    {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LiveUpdate<Item>.self)
        let follower = Follower<Item>(client: self, id: id, options: options, output: continuation)
        let task = Task { await follower.run() }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// The loop behind `follow`: one connection at a time, each event checked by version.
final class Follower<Item: Codable & Sendable>: Sendable {
    let client: LiveDeltaClient
    let id: String
    let options: FollowOptions
    let output: AsyncThrowingStream<LiveUpdate<Item>, any Error>.Continuation

    struct Position {
        var lastID: String?
        var life: String?
        var version: Int?
        var failures = 0
        var reconnectAfter: TimeInterval?
        var refreshToken = false
        var fresh: String?
        /// Why the next reset comes, where the follower asked for it.
        var resetReason: String?
        /// An undecodable event was passed by (`UndecodablePolicy.readAfresh`): until a reset
        /// decodes, another one stops following.
        var skipping = false
    }

    private let position: Locked<Position>

    init(client: LiveDeltaClient, id: String, options: FollowOptions, output: AsyncThrowingStream<LiveUpdate<Item>, any Error>.Continuation) {
        self.client = client
        self.id = id
        self.options = options
        self.output = output
        // Resuming from a token: the app shows its version, and deltas chain from it.
        position = Locked(
            Position(lastID: options.since, life: options.since.flatMap { Self.life(of: $0) }, version: Self.version(of: options.since)))
    }

    // A window's token also says which rows it holds: `<life>.<version>~<first>-<rows>`.
    static func life(of id: String) -> String? { place(id).split(separator: ".").dropLast().joined(separator: ".").nilIfEmpty }
    static func version(of id: String?) -> Int? { id.flatMap { place($0).split(separator: ".").last.flatMap { Int($0) } } }
    private static func place(_ id: String) -> Substring { id.prefix { $0 != "~" } }

    func run() async {
        while !Task.isCancelled {
            var retryAfter: TimeInterval = 0
            do {
                if let reason = position.withLock({ state -> String? in
                    defer { state.fresh = nil }
                    return state.fresh
                }) {
                    let state: SessionState<Item>
                    do {
                        state = try await client.session(id, window: options.window)
                    } catch let error as DecodingError {
                        throw FollowEnd.undecodable(
                            UndecodableEvent(session: id, event: "read", version: nil, eventID: nil, reason: UndecodableEvent.reason(error)))
                    }
                    position.withLock {
                        $0.version = state.version
                        // A window's read says where to follow it from.
                        if let token = state.token {
                            $0.lastID = token
                            $0.life = Self.life(of: token)
                        }
                    }
                    output.yield(.reset(state, reason: reason))
                }
                switch options.transport {
                case .events: try await stream()
                case .longPoll: try await poll()
                }
            } catch let end as FollowEnd {
                let stop: FollowStop
                switch end {
                case .ended(let reason): stop = FollowStop(serverReason: reason)
                case .undecodable(let event): stop = .undecodable(event)
                }
                output.yield(.connection(.stopped(stop)))
                output.finish(throwing: end)
                return
            } catch let error as LiveDeltaError where !error.isTransient {
                output.yield(.connection(.stopped(.refused(status: error.status, code: error.code, message: error.message))))
                output.finish(throwing: error)
                return
            } catch {
                if Task.isCancelled { break }
                retryAfter = (error as? LiveDeltaError)?.retryAfter ?? 0
            }
            if Task.isCancelled { break }
            let (wait, reason) = position.withLock { state -> (TimeInterval, String) in
                if state.fresh != nil { return (0, "a fresh read") }
                if let shutdown = state.reconnectAfter {
                    state.reconnectAfter = nil
                    // Spread, so that a deploy's followers do not all come back at once.
                    return (shutdown * Double.random(in: 1...2), "the server is restarting")
                }
                defer { state.failures += 1 }
                return (
                    max(retryAfter, Backoff.delay(attempt: state.failures, first: options.minDelay, most: options.maxDelay)),
                    "the connection was lost"
                )
            }
            if wait > 0 {
                output.yield(.connection(.reconnecting(delay: wait, reason: reason)))
                do { try await Backoff.sleep(wait) } catch { break }
            }
        }
        output.finish()
    }

    /// The request that opens a stream or a poll, with the token and the resume token.
    private func request(_ route: String, query extra: [URLQueryItem], accept: String) async throws -> URLRequest {
        var query = [URLQueryItem(name: "format", value: "batch")] + (options.window?.queryItems ?? []) + extra
        if let rows = options.rows, rows != .all { query.append(URLQueryItem(name: "rows", value: rows.rawValue)) }
        if let since = position.value.lastID { query.append(URLQueryItem(name: "since", value: since)) }
        var request = URLRequest(url: client.url(LiveDeltaClient.sessionPath(id, route), query: query))
        request.setValue(accept, forHTTPHeaderField: "Accept")
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let refresh = position.withLock { state in
            defer { state.refreshToken = false }
            return state.refreshToken
        }
        if let token = try await client.tokens.token(refresh: refresh) { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        return request
    }

    /// The error an answer that is not a 200 says; a first 401 asks for a new token.
    private func refusal(status: Int, headers: [String: String], body: Data, refreshed: inout Bool) -> LiveDeltaError? {
        if status == 401 && client.tokens.hasProvider && !refreshed {
            refreshed = true
            position.withLock { $0.refreshToken = true }
            return nil
        }
        let detail = try? JSONDecoder().decode(ErrorAnswer.self, from: body).error
        var error = LiveDeltaError(
            status: status, code: detail?.code ?? "http_\(status)", message: detail?.message ?? "HTTP \(status)",
            retryAfter: headers["retry-after"].flatMap(Double.init))
        if status == 401 { error.message = "the token was refused: \(error.message)" }
        return error
    }

    private func stream() async throws {
        var refreshed = false
        while true {
            output.yield(.connection(.connecting))
            let streaming = StreamingRequest()
            streaming.start(try await request("/events", query: [], accept: "text/event-stream"), configuration: client.session.configuration)
            let heard = Locked(Date())
            let watchdog = Task { [options] in
                while !Task.isCancelled {
                    try? await Backoff.sleep(1)
                    if Date().timeIntervalSince(heard.value) > options.heartbeatTimeout {
                        streaming.cancel()
                        return
                    }
                }
            }
            defer {
                watchdog.cancel()
                streaming.cancel()
            }
            var parser = EventStreamParser()
            var status = 0
            var headers: [String: String] = [:]
            var body = Data()
            for try await part in streaming.parts {
                heard.value = Date()
                switch part {
                case .head(let code, let fields):
                    (status, headers) = (code, fields)
                    if status == 200 { output.yield(.connection(.live)) }
                case .bytes(let data) where status == 200:
                    for event in parser.push(data) {
                        if try handle(event) { return }
                    }
                case .bytes(let data):
                    body.append(data)
                }
            }
            guard status == 200 else {
                if let error = refusal(status: status, headers: headers, body: body, refreshed: &refreshed) { throw error }
                continue
            }
            throw LiveDeltaError(status: 0, code: "network_error", message: "the stream ended")
        }
    }

    private func poll() async throws {
        var refreshed = false
        while true {
            output.yield(.connection(.connecting))
            let request = try await request(
                "/changes", query: [URLQueryItem(name: "wait", value: String(options.pollWait))], accept: "application/json")
            let (data, response) = try await client.session.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else {
                var headers: [String: String] = [:]
                if let value = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After") { headers["retry-after"] = value }
                if let error = refusal(status: status, headers: headers, body: data, refreshed: &refreshed) { throw error }
                continue
            }
            output.yield(.connection(.live))
            let page: PolledPage
            do {
                page = try JSONDecoder().decode(PolledPage.self, from: data)
            } catch {
                // A page Foundation cannot parse (a lone surrogate, a number past Double) holds
                // no event id to resume after either.
                try passBy(UndecodableEvent(session: id, event: "changes", version: nil, eventID: nil, reason: UndecodableEvent.reason(error)))
                return
            }
            for event in page.events {
                let text = String(decoding: try JSONEncoder().encode(event.data), as: UTF8.self)
                if try handle(ServerSentEvent(type: event.event, id: event.id, data: text)) { return }
            }
            guard let next = page.next else { throw FollowEnd.ended(reason: "closed") }
            position.withLock { $0.lastID = next }
        }
    }

    /// An event (or page) `Item` cannot take: following stops, or, where the app chose
    /// `.readAfresh`, reconnects without a resume token for a reset (the caller ends the
    /// connection). A second one before a reset decodes stops all the same.
    private func passBy(_ event: UndecodableEvent) throws {
        let skip =
            options.undecodable == .readAfresh
            && position.withLock { position -> Bool in
                guard !position.skipping else { return false }
                position.skipping = true
                position.lastID = nil
                position.resetReason = event.description
                return true
            }
        guard skip else { throw FollowEnd.undecodable(event) }
    }

    /// An event's data as `T`, or nil where it did not decode and the follower reconnects.
    private func decoded<T: Decodable>(_ type: T.Type, _ event: ServerSentEvent, _ data: Data) throws -> T? {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            try passBy(undecodable(event, data, error))
            return nil
        }
    }

    /// What an event that did not decode was, its version read alone where it can be.
    private func undecodable(_ event: ServerSentEvent, _ data: Data, _ error: any Error) -> UndecodableEvent {
        let version = (try? JSONDecoder().decode(Brings.self, from: data))?.version ?? Self.version(of: event.id)
        return UndecodableEvent(session: id, event: event.type, version: version, eventID: event.id, reason: UndecodableEvent.reason(error))
    }

    /// Whether a delta that did not decode was given already (a resume replays from an older
    /// id): then it is passed by, and a list past it is not stopped by it.
    private func given(_ event: ServerSentEvent, _ data: Data) -> Bool {
        guard let brings = try? JSONDecoder().decode(Brings.self, from: data), let version = brings.version else { return false }
        return position.withLock { position in
            // As the verdict says: a window's scroll at the version given starts from that
            // version, and is taken.
            guard let held = position.version, position.life == event.id.flatMap(Self.life(of:)) else { return false }
            guard version <= held && brings.baseVersion != held else { return false }
            position.lastID = event.id ?? position.lastID
            return true
        }
    }

    /// Takes one event; true where this connection should end (a reconnect or a fresh read).
    private func handle(_ event: ServerSentEvent) throws -> Bool {
        let data = Data(event.data.utf8)
        switch event.type {
        case "reset":
            guard var state = try decoded(SessionState<Item>.self, event, data) else { return true }
            state.eventID = event.id
            let reason = position.withLock { position -> String in
                defer {
                    position.lastID = event.id ?? position.lastID
                    position.life = event.id.flatMap(Self.life(of:)) ?? position.life
                    position.version = state.version
                    position.failures = 0
                    position.skipping = false
                    position.resetReason = nil
                }
                if let reason = position.resetReason { return reason }
                guard position.version != nil else { return "start" }
                // Another life: the session was replaced (or began again) since.
                let life = event.id.flatMap(Self.life(of:))
                return life != nil && position.life != nil && life != position.life ? "replaced" : "reset"
            }
            output.yield(.reset(state, reason: reason))
        case "delta":
            var delta: DeltaEvent<Item>
            do {
                delta = try JSONDecoder().decode(DeltaEvent<Item>.self, from: data)
            } catch {
                if given(event, data) { return false }
                try passBy(undecodable(event, data, error))
                return true
            }
            delta.eventID = event.id
            let verdict = position.withLock { position -> DeltaVerdict in
                let life = event.id.flatMap(Self.life(of:))
                defer { position.lastID = event.id ?? position.lastID }
                // (A window's scroll at the same version starts from that version: not given yet.)
                if let version = position.version, life == position.life, delta.version <= version, delta.baseVersion != version { return .skip }
                guard let version = position.version, delta.baseVersion == version, life == nil || life == position.life else {
                    return .reread("a delta from version \(delta.baseVersion) arrived at version \(position.version.map(String.init) ?? "none")")
                }
                guard delta.answer.hasDelta else { return .reread("version \(delta.version) came without a delta") }
                position.version = delta.version
                position.failures = 0
                return .apply
            }
            switch verdict {
            case .apply: output.yield(.delta(delta))
            case .skip: break
            case .reread(let reason):
                position.withLock { $0.fresh = reason }
                return true
            }
        case "window":
            guard var moved = try decoded(WindowEvent.self, event, data) else { return true }
            moved.eventID = event.id
            let fits = position.withLock { position -> Bool in
                position.lastID = event.id ?? position.lastID
                guard position.version == moved.baseVersion else { return false }
                position.version = moved.version
                return true
            }
            guard fits else {
                position.withLock { $0.fresh = "a window event from version \(moved.baseVersion) arrived at another" }
                return true
            }
            output.yield(.window(moved))
        case "end":
            throw FollowEnd.ended(reason: (try? JSONDecoder().decode(EndData.self, from: data))?.reason ?? "ended")
        case "shutdown":
            let retry = (try? JSONDecoder().decode(ShutdownData.self, from: data))?.retry ?? 1_000
            position.withLock { $0.reconnectAfter = retry / 1_000 }
            return true
        case "expired":
            position.withLock {
                $0.refreshToken = true
                $0.reconnectAfter = 0
            }
            return true
        default:
            break
        }
        return false
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// What to do with a delta event.
private enum DeltaVerdict {
    case apply
    /// Already given (a resumed stream replays from an older id after a fresh read).
    case skip
    /// Not from the version given: read the session afresh instead.
    case reread(String)
}

/// A long poll's answer.
private struct PolledPage: Decodable {
    struct Event: Decodable {
        var event: String
        var id: String?
        var data: JSONValue
    }
    var events: [Event]
    var next: String?
}

private struct EndData: Decodable { var reason: String }

/// The version an event brings, read alone.
private struct Brings: Decodable {
    var version: Int?
    var baseVersion: Int?
}

private struct ShutdownData: Decodable { var retry: Double? }
