import ByteJSON
import LiveCollections

/// A windowed subscriber's resume token: its position, and the rows it held there
/// (`<incarnation>.<version>~<first row>-<rows>`), so that a client reconnecting with another
/// window is sent one delta from the rows it shows to the rows it asks for.
struct WindowToken: Equatable, Sendable {
    var position: LivePosition
    var rows: Range<Int>?

    init(position: LivePosition, rows: Range<Int>?) {
        self.position = position
        self.rows = rows
    }

    init?(token: String) {
        guard let tilde = token.firstIndex(of: "~") else {
            guard let position = LivePosition(token: token) else { return nil }
            self.init(position: position, rows: nil)
            return
        }
        let place = token[token.index(after: tilde)...].split(separator: "-", omittingEmptySubsequences: false)
        guard let position = LivePosition(token: String(token[..<tilde])), place.count == 2, let first = Int(place[0]),
            let count = Int(place[1]), first >= 0, count >= 0, count <= 1 << 30, first <= 1 << 40
        else { return nil }
        self.init(position: position, rows: first..<first + count)
    }

    var token: String {
        guard let rows else { return position.token }
        // Written byte by byte into the string's own storage: a fan-out spells thousands a
        // commit, and interpolation built the position's token and each number as strings of
        // their own (about 8% of a window delta's time).
        var incarnation = position.incarnation
        return incarnation.withUTF8 { name in
            String(unsafeUninitializedCapacity: name.count + 3 + 3 * 20) { buffer in
                var end = 0
                for byte in name {
                    buffer[end] = byte
                    end += 1
                }
                buffer[end] = UInt8(ascii: ".")
                end = Self.decimal(position.version, into: buffer, at: end + 1)
                buffer[end] = UInt8(ascii: "~")
                end = Self.decimal(UInt64(rows.lowerBound), into: buffer, at: end + 1)
                buffer[end] = UInt8(ascii: "-")
                return Self.decimal(UInt64(rows.count), into: buffer, at: end + 1)
            }
        }
    }

    /// `number` in decimal at `start`; where it ends.
    private static func decimal(_ number: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        var digits = 1
        var rest = number / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var value = number
        for at in stride(from: start + digits - 1, through: start, by: -1) {
            buffer[at] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        }
        return start + digits
    }
}

extension JSONWriter {
    /// `"window": {offset, count, total}` (and a keyset window's anchor: `after` or `before`,
    /// null where it reads from an edge), after an answer's other members. A sectioned
    /// session's are counted in sections. The anchor's id is `collection`'s, or `anchorID`
    /// where given.
    mutating func windowMember(_ window: PlacedWindow, in collection: JSONCollection, anchorID: String? = nil) {
        member("window")
        raw("{")
        member("offset", first: true)
        int(window.rows.lowerBound)
        member("count")
        int(window.rows.count)
        member("total")
        int(window.total)
        switch window.shape.kind {
        case .offset: break
        case .after: member("after")
        case .before: member("before")
        }
        if window.shape.isKeyset {
            if let id = anchorID ?? window.anchorID(in: collection) { Array(id.utf8).withUnsafeBufferPointer { raw($0) } } else { raw("null") }
        }
        raw("}")
    }
}

extension SessionSnapshot {
    /// A window of the session as a read answers it and a reset starts a subscriber from:
    /// the summary, options, the window's rows (`items`, or whole `sections`) and where they
    /// are; with the token a subscriber resumes from, where asked. A snapshot of some of the
    /// session's rows (`SessionRows`) holds them from position `first`, of `held`'s count of
    /// rows and of items, and a keyset window's anchor may be outside them (`anchorID`).
    func windowJSON(
        _ window: PlacedWindow, token: String? = nil, first: Int = 0, rows held: (count: Int, items: Int)? = nil, anchorID: String? = nil
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 512 + 128 * window.rows.count)
        writer.raw("{")
        writer.sessionSummary(self, rows: held)
        let rows = window.rows.lowerBound - first..<window.rows.upperBound - first
        writer.member("options")
        writer.options(options)
        switch collection.shape {
        case .flat(let items):
            writer.member("items")
            writer.items(Array(items[rows]))
        case .sectioned(let sections):
            writer.member("sections")
            writer.array(Array(sections[rows])) { writer, section in writer.raw(section.text) }
        }
        writer.windowMember(window, in: collection, anchorID: anchorID)
        if let token {
            writer.member("token")
            writer.string(token)
        }
        writer.raw("}")
        return writer.bytes
    }

    func windowToken(_ window: PlacedWindow) -> WindowToken {
        WindowToken(position: LivePosition(incarnation: incarnation, version: version), rows: window.rows)
    }
}

/// The events a windowed subscriber is sent.
enum WindowEvents {
    /// The window's rows, whole.
    static func reset(_ state: SessionSnapshot, _ window: PlacedWindow) -> LiveEvent {
        LiveEvent(name: .reset, id: state.windowToken(window).token, data: state.windowJSON(window))
    }

    /// What a windowed delta is made of: the rows (or sections) before and after, and the
    /// delta between them.
    enum Step {
        case flat(IndexDelta, old: ItemRows, new: ItemRows)
        case sectioned(SectionedDelta, old: [JSONSection], new: [JSONSection])
    }

    /// A delta event from a window at `baseVersion` to `window` in `state`, `deleted` the rows
    /// that left because their item was deleted (for `includeDeletedItems`): nil where it
    /// cannot be spelled (the subscriber is then reset to the window).
    static func delta(
        _ step: Step, deleted: [JSONItem], baseVersion: UInt64, to window: PlacedWindow, in state: SessionSnapshot, owners: DocumentOwners,
        spelling: LiveSpelling
    ) -> LiveEvent? {
        let policy = state.options.policy
        let deltaSpelling = spelling.applied(to: state.options)
        // Written once, into room for what it most likely holds: a fan-out writes thousands of
        // these a commit.
        var writer: JSONWriter
        switch step {
        case .flat(let delta, let old, let new):
            let animated = policy.animated(delta, oldCount: old.count, newCount: new.count)
            // Over the data-count threshold (a window wider than it): the rows whole.
            guard animated.delta != nil else { return reset(state, window) }
            let update = CollectionUpdate<JSONItem>(
                animation: animated.animation, delta: animated.delta, deletedItems: deleted, baseVersion: baseVersion, version: state.version)
            writer = JSONWriter(capacity: 512 + (spelling.carried == .whole ? 64 * new.count : 0))
            writer.raw("{")
            withExtendedLifetime(owners) {
                writer.flatChange(
                    update, old: old, new: new, id: state.id, includeDeleted: state.options.includeDeletedItems, spelling: deltaSpelling,
                    carrying: spelling.carried)
            }
        case .sectioned(let delta, let old, let new):
            let animated = policy.animated(
                delta, oldSections: old.count, newSections: new.count, oldItems: old.itemCount, newItems: new.itemCount, deletedItemPaths: [])
            guard animated.sectionDelta != nil, animated.itemDelta != nil else { return reset(state, window) }
            let update = SectionedCollectionUpdate<JSONItem>(
                sectionAnimation: animated.sectionAnimation, itemAnimation: animated.itemAnimation, sectionDelta: animated.sectionDelta,
                itemDelta: animated.itemDelta, deletedItems: deleted, baseVersion: baseVersion, version: state.version)
            writer = JSONWriter(capacity: 512 + (spelling.carried == .whole ? 64 * new.itemCount : 0))
            writer.raw("{")
            do {
                try withExtendedLifetime(owners) { () throws(APIError) in
                    try writer.outcome(
                        .sectioned(update, old: old, new: new), id: state.id, includeDeleted: state.options.includeDeletedItems,
                        spelling: deltaSpelling, carrying: spelling.carried)
                }
            } catch {
                return nil
            }
        }
        writer.windowMember(window, in: state.collection)
        writer.raw("}")
        return LiveEvent(name: .delta, id: state.windowToken(window).token, data: writer.bytes)
    }

    /// What a client held at another state (a reconnection, a scroll): a window's rows, or its
    /// sections.
    enum Held {
        case flat([JSONItem])
        case sectioned([JSONSection])

        var items: [JSONItem] {
            switch self {
            case .flat(let items): items
            case .sectioned(let sections): sections.flatMap(\.items)
            }
        }
    }

    /// The delta from rows a client held at another state (a reconnection, a scroll) to a
    /// window now: the two windows' rows diffed, a few each. Nil where it cannot be worked out.
    static func catchUp(
        from held: Held, baseVersion: UInt64, owners before: DocumentOwners, to window: PlacedWindow, in state: SessionSnapshot,
        spelling: LiveSpelling
    )
        -> LiveEvent?
    {
        let step: Step
        switch (held, state.collection.shape) {
        case (.flat(let old), .flat(let items)):
            let new = Array(items[window.rows])
            guard let delta = try? IndexDelta(from: old, to: new) else { return nil }
            step = .flat(delta, old: ItemRows(old), new: ItemRows(new))
        case (.sectioned(let old), .sectioned(let sections)):
            let new = Array(sections[window.rows])
            guard let delta = try? SectionedDelta(from: old, to: new) else { return nil }
            step = .sectioned(delta, old: old, new: new)
        default: return nil
        }
        var deleted: [JSONItem] = []
        if state.options.includeDeletedItems {
            // Rows the client held are deleted where their id is nowhere in the session.
            let leaving = held.items
            let finder = HashFinder(leaving)
            var present = [Bool](repeating: false, count: leaving.count)
            let visit = { (item: JSONItem) in if let index = finder.find(item) { present[index] = true } }
            switch state.collection.shape {
            case .flat(let items): items.forEach(visit)
            case .sectioned(let sections): for section in sections { section.items.forEach(visit) }
            }
            deleted = leaving.indices.filter { !present[$0] }.map { leaving[$0] }
        }
        return delta(
            step, deleted: deleted, baseVersion: baseVersion, to: window, in: state, owners: before.merging(state.collection.owners),
            spelling: spelling)
    }
}
