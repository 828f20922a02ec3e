import Foundation

#if canImport(Combine)
    import Combine
#endif

/// A session's collection on the main actor, kept equal to it version by version: give it each
/// `LiveUpdate` from `follow`. A delta is checked before it is taken (it must start at this
/// version, and replaying it must give the collection the event carries); one that does not
/// fit is refused and `needsFreshRead` is set, so the list never shows a wrong collection.
/// `onChange` tells a view what happened (a reset or an animated delta), with the collection
/// before and after; on Apple platforms it is an `ObservableObject` for SwiftUI too.
@MainActor
public final class LiveList<Item: Codable & Sendable & Equatable> {
    /// What changed, for a view to animate (`BatchUpdater`) or reload.
    public enum Change {
        case reset
        case delta(DeltaAnswer, oldItems: [Item], oldSections: [LiveSection<Item>])
        /// A window's rows are the same; where they are (`window`) or the total changed.
        case window
    }

    /// The items of a flat session (empty for a sectioned one).
    public private(set) var items: [Item] = []
    /// The sections of a sectioned session (empty for a flat one).
    public private(set) var sections: [LiveSection<Item>] = []
    /// Whether the session is sectioned.
    public private(set) var isSectioned = false
    /// The version shown; nil before the first.
    public private(set) var version: Int?
    /// The connection's state, for the screen.
    public private(set) var connection: ConnectionState = .connecting
    /// The last event's id: give it as `FollowOptions.since` to resume elsewhere (another
    /// replica, or after the app was away) from the version shown.
    public private(set) var resumeToken: String?
    /// Set where a delta did not fit: read the session (`follow` does so by itself).
    public private(set) var needsFreshRead = false
    /// For a window (`FollowOptions.window`): where its rows (`items`) are in the session.
    public private(set) var window: WindowPlace?
    /// The window `follow` follows; `moveWindow` changes it.
    public private(set) var followedWindow: Window?
    /// The connection `follow` is reading, ended by `moveWindow` to open the next.
    private var connection_: Task<Bool, any Error>?
    /// Called after each change, with what it was.
    public var onChange: ((Change) -> Void)?
    /// Called after every update taken (a change or the connection's state), for
    /// `ObservedLiveList`; apps use `onChange`.
    var didTake: (() -> Void)?

    /// An empty list; give it updates, or `follow` a session.
    public init() {}

    /// Takes one update; false where a delta did not fit (nothing was changed).
    @discardableResult
    public func take(_ update: LiveUpdate<Item>) -> Bool {
        defer { didTake?() }
        switch update {
        case .connection(let state):
            connection = state
            return true
        case .reset(let state, _):
            willChange()
            isSectioned = state.sections != nil
            items = state.items ?? []
            sections = state.sections ?? []
            version = state.version
            window = state.window
            resumeToken = state.eventID ?? state.token ?? resumeToken
            needsFreshRead = false
            onChange?(.reset)
            return true
        case .window(let event):
            guard version == event.baseVersion else {
                needsFreshRead = true
                return false
            }
            willChange()
            version = event.version
            window = event.window
            resumeToken = event.eventID ?? resumeToken
            onChange?(.window)
            return true
        case .delta(let event):
            guard version == event.baseVersion, let new = after(event) else {
                needsFreshRead = true
                return false
            }
            willChange()
            let (oldItems, oldSections) = (items, sections)
            switch new {
            case .items(let new): items = new
            case .sections(let new): sections = new
            }
            version = event.version
            window = event.window ?? window
            resumeToken = event.eventID ?? resumeToken
            onChange?(.delta(event.answer, oldItems: oldItems, oldSections: oldSections))
            return true
        }
    }

    /// What the event's delta makes of what is shown: where it carries the collection, that,
    /// if replaying the delta gives it; where it carries only the changed rows, the replay
    /// with them in place. Nil where it does not fit.
    private func after(_ event: DeltaEvent<Item>) -> SessionCollection<Item>? {
        if isSectioned {
            guard let new = event.sections, let sectionDelta = event.answer.sectionDelta, let itemDelta = event.answer.itemDelta,
                (try? BatchReplay.sectioned(sections, sectionDelta: sectionDelta, itemDelta: itemDelta, new: new)) == new
            else { return nil }
            return .sections(new)
        }
        guard let delta = event.answer.delta else { return nil }
        if let rows = event.rows, event.items == nil {
            return (try? BatchReplay.flat(items, delta, rows: rows, newCount: event.answer.newCount)).map { .items($0) }
        }
        guard let new = event.items, (try? BatchReplay.flat(items, delta, new: new)) == new else { return nil }
        return .items(new)
    }

    #if canImport(Combine)
        // nonisolated(unsafe): sent only from the main actor (willChange), and SwiftUI
        // subscribes to it on the main thread.
        nonisolated(unsafe) fileprivate let changes = ObservableObjectPublisher()
        private func willChange() { changes.send() }
    #else
        private func willChange() {}
    #endif

    /// Follows session `id` with `client` and takes every update, until the task is cancelled
    /// or the session ends (returned: `.cancelled`, `.deleted`, `.expired`, `.evicted`) or
    /// following stops for good (thrown: a `LiveDeltaError` the server refused with, or
    /// `FollowEnd.undecodable`). Either way `connection` ends `.stopped`, saying why.
    /// A delta that does not fit what is shown starts following afresh, from the session whole.
    ///
    /// With `options.window` it follows those rows alone; `moveWindow` scrolls.
    @discardableResult
    public func follow(_ id: String, with client: LiveDeltaClient, options: FollowOptions = FollowOptions()) async throws -> FollowStop {
        do {
            try await following(id, with: client, options: options)
        } catch FollowEnd.ended(let reason) {
            return stopped(FollowStop(serverReason: reason))
        } catch FollowEnd.undecodable(let event) {
            stopped(.undecodable(event))
            throw FollowEnd.undecodable(event)
        } catch let error as LiveDeltaError {
            stopped(.refused(status: error.status, code: error.code, message: error.message))
            throw error
        }
        return stopped(.cancelled)
    }

    /// Says in `connection` why following stopped (the stream said so already where it could).
    @discardableResult
    private func stopped(_ stop: FollowStop) -> FollowStop {
        if connection != .stopped(stop) { take(.connection(.stopped(stop))) }
        return stop
    }

    /// `follow`'s loop: returns where the task was cancelled, throws where following ended.
    private func following(_ id: String, with client: LiveDeltaClient, options: FollowOptions) async throws {
        var options = options
        // The list puts a delta's changed rows in place itself: it needs no more.
        options.rows = options.rows ?? .changed
        followedWindow = options.window
        while !Task.isCancelled {
            let window = followedWindow
            options.window = window
            let stream = client.follow(id, as: Item.self, options: options)
            let connection = Task { @MainActor [weak self] () throws -> Bool in
                for try await update in stream {
                    guard let self, !Task.isCancelled else { return false }
                    if !self.take(update) { return true }
                }
                return false
            }
            connection_ = connection
            let refused = try await withTaskCancellationHandler {
                try await connection.value
            } onCancel: {
                connection.cancel()
            }
            connection_ = nil
            if Task.isCancelled { return }
            if followedWindow != window {
                // A scroll: from the rows shown, one delta to the new window's.
                options.since = resumeToken
                continue
            }
            guard refused else { return }
            // Without a resume token the server starts with the session whole (a reset).
            options.since = nil
        }
    }

    /// Follows another window (the user scrolled): `follow` reconnects at once with the resume
    /// token and `window`, and the server sends one delta from the rows shown to the new
    /// window's, not a reset.
    public func moveWindow(_ window: Window) {
        guard window != followedWindow else { return }
        followedWindow = window
        connection_?.cancel()
    }
}

#if canImport(Combine)
    extension LiveList: ObservableObject {
        /// Sent before each change, for SwiftUI.
        public nonisolated var objectWillChange: ObservableObjectPublisher { changes }
    }
#endif
