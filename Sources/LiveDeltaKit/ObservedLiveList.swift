#if canImport(Observation)
    import Observation

    /// A `LiveList` under Observation (`@Observable`): a SwiftUI view reading `items` is drawn
    /// again when they change, and only then. Where Observation is not available (before iOS
    /// 17, macOS 14, tvOS 17, watchOS 10), use `LiveList`, an `ObservableObject`.
    ///
    /// ```swift
    /// @State var feed = ObservedLiveList<Film>()
    /// var body: some View {
    ///     List(feed.items, id: \.id) { Text($0.title) }
    ///         .task { try? await feed.follow("feed-42", with: client) }
    /// }
    /// ```
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @MainActor
    @Observable
    public final class ObservedLiveList<Item: Codable & Sendable & Equatable> {
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
        /// The list underneath: its `onChange` tells a UIKit view what to animate, and its
        /// `resumeToken` where to resume.
        @ObservationIgnored public let list = LiveList<Item>()

        /// An empty list; give it updates, or `follow` a session.
        public init() {
            list.didTake = { [weak self] in self?.copy() }
        }

        /// Takes one update (see `LiveList.take`).
        @discardableResult
        public func take(_ update: LiveUpdate<Item>) -> Bool { list.take(update) }

        /// Follows session `id` (see `LiveList.follow`): says why it stopped.
        @discardableResult
        public func follow(_ id: String, with client: LiveDeltaClient, options: FollowOptions = FollowOptions()) async throws -> FollowStop {
            try await list.follow(id, with: client, options: options)
        }

        /// Copies what changed, so that observers of the rest are not told.
        private func copy() {
            if items != list.items { items = list.items }
            if sections != list.sections { sections = list.sections }
            if isSectioned != list.isSectioned { isSectioned = list.isSectioned }
            if version != list.version { version = list.version }
            if connection != list.connection { connection = list.connection }
        }
    }
#endif
