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
        return "\(position.token)~\(rows.lowerBound)-\(rows.count)"
    }
}

extension JSONWriter {
    /// `"window": {offset, count, total}` (and a keyset window's anchor: `after` or `before`,
    /// null where it reads from an edge), after an answer's other members.
    mutating func windowMember(_ window: PlacedWindow, items: [JSONItem]) {
        member("window")
        raw("{")
        member("offset", first: true)
        int(window.rows.lowerBound)
        member("count")
        int(window.rows.count)
        member("total")
        int(window.total)
        switch window.request.anchor {
        case .offset: break
        case .after: member("after")
        case .before: member("before")
        }
        if window.request.isKeyset {
            if let id = window.anchorID(in: items) { Array(id.utf8).withUnsafeBufferPointer { raw($0) } } else { raw("null") }
        }
        raw("}")
    }
}

extension SessionSnapshot {
    /// A window of the session as a read answers it and a reset starts a subscriber from:
    /// the summary, options, the window's rows (`items`) and where they are; with the token a
    /// subscriber resumes from, where asked.
    func windowJSON(_ window: PlacedWindow, token: String? = nil) -> [UInt8] {
        guard case .flat(let items) = collection.shape else { return json }
        var writer = JSONWriter(capacity: 512 + 128 * window.rows.count)
        writer.raw("{")
        writer.sessionSummary(self)
        writer.member("options")
        writer.options(options)
        writer.member("items")
        writer.items(Array(items[window.rows]))
        writer.windowMember(window, items: items)
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

    /// What a windowed delta is made of: the rows before and after, and the delta between them.
    struct Step {
        var delta: IndexDelta
        var oldRows: [JSONItem]
        var newRows: [JSONItem]
        /// Rows that left because their item was deleted (for `includeDeletedItems`).
        var deleted: [JSONItem]
        var baseVersion: UInt64
    }

    /// A delta event from a window at `step.baseVersion` to `window` in `state`: nil where it
    /// cannot be spelled (the subscriber is then reset to the window).
    static func delta(_ step: Step, to window: PlacedWindow, in state: SessionSnapshot, owners: DocumentOwners, spelling: LiveSpelling)
        -> LiveEvent?
    {
        guard case .flat(let items) = state.collection.shape else { return nil }
        let animated = state.options.policy.animated(step.delta, oldCount: step.oldRows.count, newCount: step.newRows.count)
        // Over the data-count threshold (a window wider than it): the rows whole.
        guard animated.delta != nil else { return reset(state, window) }
        let update = CollectionUpdate<JSONItem>(
            animation: animated.animation, delta: animated.delta, deletedItems: step.deleted, baseVersion: step.baseVersion,
            version: state.version)
        let change = SessionChange(
            id: state.id, incarnation: state.incarnation, created: false, options: state.options,
            outcome: .flat(update, old: step.oldRows, new: step.newRows), owners: owners)
        guard var data = try? change.json(spelling: spelling.applied(to: state.options), withCollection: spelling.needsCollection),
            data.last == UInt8(ascii: "}")
        else { return nil }
        data.removeLast()
        var writer = JSONWriter(capacity: 128)
        writer.windowMember(window, items: items)
        writer.raw("}")
        data += writer.bytes
        return LiveEvent(name: .delta, id: state.windowToken(window).token, data: data)
    }

    /// The delta from rows a client held at another state (a reconnection, a scroll) to a
    /// window now: the two windows' rows diffed, a few each. Nil where it cannot be worked out.
    static func catchUp(
        from old: [JSONItem], baseVersion: UInt64, owners before: DocumentOwners, to window: PlacedWindow, in state: SessionSnapshot,
        spelling: LiveSpelling
    )
        -> LiveEvent?
    {
        guard case .flat(let items) = state.collection.shape else { return nil }
        let new = Array(items[window.rows])
        guard let delta = try? IndexDelta(from: old, to: new) else { return nil }
        var deleted: [JSONItem] = []
        if state.options.includeDeletedItems {
            // Rows that left the window are deleted where their id is nowhere in the session.
            let leaving = delta.deletions.map { old[$0] }
            let finder = HashFinder(leaving)
            var present = [Bool](repeating: false, count: leaving.count)
            for item in items { if let index = finder.find(item) { present[index] = true } }
            deleted = leaving.indices.filter { !present[$0] }.map { leaving[$0] }
        }
        let step = Step(delta: delta, oldRows: old, newRows: new, deleted: deleted, baseVersion: baseVersion)
        return Self.delta(step, to: window, in: state, owners: before.merging(state.collection.owners), spelling: spelling)
    }
}
