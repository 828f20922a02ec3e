import ByteJSON
import LiveCollections
import MicroHTTP

/// What a feed keeps of a change once the change is trimmed from its history: where its rows
/// went (its projection), and each row it deleted, moved or reloaded as it was before it,
/// copied out of the session's documents. A feed of a million rows holds one or two versions
/// within `--live-history-bytes` (each is the whole list), so a windowed subscriber that
/// reconnects or scrolls from a version a moment old would be reset; from these it is caught up
/// in one delta instead. Its rows at that version are the rows now they became, except those a
/// later change touched, whose text before that change is here (`LiveTrace.rows`).
struct TracedChange: Sendable {
    let position: LivePosition
    let baseVersion: UInt64
    /// Rows before the change.
    let oldCount: Int
    let projection: WindowProjection
    /// For each row the change touched, by its position before: the row as it was.
    let touched: [Int: JSONItem]
    /// Keeps the copies' text alive.
    let owners: DocumentOwners
    let bytes: Int

    /// Nil for a step that is not a flat change with an exact delta of unique items, or that
    /// touched more than `maxRows` rows (copying them is not worth it: such a subscriber is
    /// reset).
    init?(_ entry: LiveEntry, maxRows: Int) {
        guard case .change(let change) = entry.kind, change.options.unique, case .flat(_, let before, _) = change.outcome,
            let projection = entry.projection
        else { return nil }
        let delta = projection.delta
        var positions = Set(delta.deletions)
        for move in delta.moves { positions.insert(move.source) }
        for reload in delta.reloads { positions.insert(reload.source) }
        guard positions.count <= maxRows else { return nil }
        let sorted = positions.sorted()
        var text: [UInt8] = [UInt8(ascii: "[")]
        for (index, position) in sorted.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            text.append(contentsOf: before[position].text)
        }
        text.append(UInt8(ascii: "]"))
        // Read by the session's own options: the copies hash and compare as the rows did.
        guard
            let copy = try? CollectionDocument.read(ByteBuffer(text), options: change.options, limits: ReadLimits(maxDepth: 1_000, maxItems: .max)),
            case .flat(let items) = copy.shape, items.count == sorted.count
        else { return nil }
        self.position = entry.position
        baseVersion = change.baseVersion
        oldCount = before.count
        self.projection = projection
        touched = Dictionary(uniqueKeysWithValues: zip(sorted, items))
        owners = copy.owners
        bytes = text.count + 48 * (items.count + delta.deletions.count + delta.insertions.count + delta.moves.count + delta.reloads.count)
    }
}

/// A feed's traced changes, oldest first, each following the one before: the versions just
/// before its history.
struct LiveTrace {
    private(set) var changes: [TracedChange] = []
    private var bytes = 0
    static let most = 1_024

    /// Takes a step trimmed from the history, or forgets all where it cannot be traced (every
    /// traced change before it would lead to a gap).
    mutating func take(_ entry: LiveEntry, limits: LiveFeed.Limits) {
        guard let traced = TracedChange(entry, maxRows: 10_000),
            changes.last.map({ $0.position.incarnation == traced.position.incarnation && $0.position.version == traced.baseVersion }) ?? true
        else {
            (changes, bytes) = ([], 0)
            return
        }
        changes.append(traced)
        bytes += traced.bytes
        // At most 1,024 changes in a quarter of the history's bytes: the trace is for scrolls
        // and reconnections a few seconds old, not for a subscriber gone for long. (Not the
        // history's count of versions: that is what a feed of large states trims first.)
        var drop = 0
        while drop < changes.count && (changes.count - drop > Self.most || bytes > limits.bytes / 4) {
            bytes -= changes[drop].bytes
            drop += 1
        }
        if drop > 0 { changes.removeFirst(drop) }
    }

    /// The rows `rows` held at `version`, as they were then, taken to `now` over the traced
    /// changes and then the history's (`log`); nil where they do not reach from `version` to
    /// `now` without a gap.
    func rows(_ rows: Range<Int>, at version: LivePosition, log: [LiveEntry], now: SessionSnapshot) -> (items: [JSONItem], owners: DocumentOwners)? {
        guard case .flat(let current) = now.collection.shape, version.incarnation == now.incarnation else { return nil }
        var positions: [Int?] = Array(rows)
        var items: [JSONItem?] = Array(repeating: nil, count: rows.count)
        var owners = now.collection.owners
        var at = version.version
        var counted = false
        for change in changes where change.position.incarnation == version.incarnation && change.position.version > at {
            guard change.baseVersion == at, counted || rows.upperBound <= change.oldCount else { return nil }
            counted = true
            for index in positions.indices {
                guard let position = positions[index] else { continue }
                if items[index] == nil, let old = change.touched[position] { items[index] = old }
                positions[index] = change.projection.newPosition(ofOld: position)
            }
            owners = owners.merging(change.owners)
            at = change.position.version
        }
        for entry in log where entry.position.incarnation == version.incarnation && entry.position.version > at {
            guard entry.baseVersion == at, case .change(let change) = entry.kind, case .flat(_, let before, _) = change.outcome,
                let projection = entry.projection, counted || rows.upperBound <= before.count
            else { return nil }
            counted = true
            for index in positions.indices {
                guard let position = positions[index] else { continue }
                // Untouched since the version asked for: the row as it was then.
                if items[index] == nil { items[index] = before[position] }
                positions[index] = projection.newPosition(ofOld: position)
            }
            owners = owners.merging(change.owners)
            at = entry.position.version
        }
        guard at == now.version, counted else { return nil }
        var held: [JSONItem] = []
        held.reserveCapacity(items.count)
        for (item, position) in zip(items, positions) {
            // A row no change touched is as it is now.
            guard let row = item ?? position.map({ current[$0] }) else { return nil }
            held.append(row)
        }
        return (held, owners)
    }
}
