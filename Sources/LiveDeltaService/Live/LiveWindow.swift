import ByteJSON
import LiveCollections
import MicroHTTP

/// The rows of a flat session a read or a subscriber asks for: `limit` rows from `offset`, or
/// after (`after`) or before (`before`) an item, with `overscan` rows more on each side. In a
/// sectioned session the rows are sections, each whole, and `after` and `before` name sections.
///
/// An offset window stays at its offset: a row inserted above it pushes one row out at its
/// bottom and brings one in at its top. A keyset window stays with its anchor item, wherever it
/// moves. When the anchor is deleted, the window takes the nearest item that remains on the
/// side it was reading from (above an `after` anchor, below a `before` one) as its anchor, so
/// it keeps showing the rows it was showing; with none left there, it reads from the top
/// (`after`) or up to the end (`before`).
struct WindowRequest: Sendable, Hashable {
    enum Anchor: Sendable, Hashable {
        case offset(Int)
        /// The anchor's id as JSON text.
        case after(String)
        case before(String)
    }

    var anchor: Anchor
    var limit: Int
    var overscan: Int

    /// A keyset window's anchor id (JSON text); nil for an offset window.
    var anchorID: String? {
        switch anchor {
        case .offset: nil
        case .after(let id), .before(let id): id
        }
    }

    var isKeyset: Bool {
        if case .offset = anchor { false } else { true }
    }

    /// The window the query asks for; nil where it names none (the whole session).
    static func parse(_ request: HTTPRequest, maxRows: Int) throws(APIError) -> WindowRequest? {
        let offset = request.query("offset")
        let after = request.query("after")
        let before = request.query("before")
        let overscanText = request.query("overscan")
        guard let limitText = request.query("limit") else {
            if let name = offset.map({ _ in "offset" }) ?? after.map({ _ in "after" }) ?? before.map({ _ in "before" })
                ?? overscanText.map({ _ in "overscan" })
            {
                throw .invalidParameter(name, "\(name) places a window, which needs a limit: add limit=<rows> (1 to \(maxRows))")
            }
            return nil
        }
        guard let limit = Int(limitText), (1...maxRows).contains(limit) else {
            throw .invalidParameter(
                "limit", "limit must be a whole number of rows from 1 to \(maxRows) (--max-window-rows, LIVEDELTA_MAX_WINDOW_ROWS)")
        }
        let given = [offset.map { _ in "offset" }, after.map { _ in "after" }, before.map { _ in "before" }].compactMap { $0 }
        guard given.count <= 1 else {
            throw .invalidParameter(given[1], "\(given.joined(separator: " and ")) each place the window: give one of them")
        }
        var overscan = 0
        if let overscanText {
            guard let rows = Int(overscanText), (0...maxRows).contains(rows) else {
                throw .invalidParameter("overscan", "overscan must be a whole number of rows from 0 to \(maxRows) (--max-window-rows), on each side")
            }
            overscan = rows
        }
        let anchor: Anchor
        if let after {
            anchor = .after(try anchorID(after, parameter: "after"))
        } else if let before {
            anchor = .before(try anchorID(before, parameter: "before"))
        } else if let offset {
            guard let start = Int(offset), start >= 0 else {
                throw .invalidParameter("offset", "offset must be a whole number of rows from 0 (the first row) up")
            }
            anchor = .offset(start)
        } else {
            anchor = .offset(0)
        }
        return WindowRequest(anchor: anchor, limit: limit, overscan: overscan)
    }

    /// An anchor's id as JSON text: a number or a quoted string as JSON spells them; any other
    /// text is taken as a string.
    private static func anchorID(_ text: String, parameter: String) throws(APIError) -> String {
        guard !text.isEmpty, text.utf8.count <= 4_096 else {
            throw .invalidParameter(parameter, "\(parameter) must be an item's id (up to 4096 bytes): a number, or a string (quoted or not)")
        }
        let bytes = Array(text.utf8)
        if let value = try? bytes.withUnsafeBufferPointer({ buffer throws(JSONError) in try JSONValue(parsing: buffer, maxDepth: 16) }) {
            switch value {
            case .string, .number: return text
            default:
                throw .invalidParameter(parameter, "\(parameter) must be an item's id: a number, or a string (quoted or not), not \(text)")
            }
        }
        var writer = JSONWriter()
        writer.string(text)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// Why a window cannot be placed in a session.
enum WindowRefusal: Error {
    /// A keyset window's anchor is not in the session.
    case unknownAnchor(String)
    /// Keyset windows need ids that name one item each.
    case notUnique
}

/// What of a window's request places it, without the anchor's id: plain values, so that a
/// fan-out pass moving thousands of windows copies no reference (the id is looked up by
/// position where an event names it).
struct WindowShape: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case offset(Int)
        case after
        case before
    }

    var kind: Kind
    var limit: Int
    var overscan: Int

    init(_ request: WindowRequest) {
        kind =
            switch request.anchor {
            case .offset(let offset): .offset(offset)
            case .after: .after
            case .before: .before
            }
        limit = request.limit
        overscan = request.overscan
    }

    var isKeyset: Bool {
        if case .offset = kind { false } else { true }
    }
}

/// A window placed in one state of a session: the rows it holds and, for a keyset window,
/// where its anchor is.
struct PlacedWindow: Sendable, Hashable {
    let shape: WindowShape
    /// The anchor's position (keyset windows): -1 before the first row (an `after` window whose
    /// anchors are all gone reads from the top), `count` past the last (a `before` window's).
    var anchor: Int
    /// The rows the window holds, overscan included.
    var rows: Range<Int>
    /// The session's items then.
    var total: Int

    /// The window placed in `collection`: over its items, or its sections.
    static func place(_ request: WindowRequest, in collection: JSONCollection, options: DiffOptions) throws(WindowRefusal) -> PlacedWindow {
        let total = collection.placeCount
        switch request.anchor {
        case .offset: return PlacedWindow(request, anchor: 0, total: total)
        case .after(let id), .before(let id):
            let position: Int?
            switch collection.shape {
            case .flat(let items):
                guard options.unique else { throw .notUnique }
                position = ItemLookup(id: id, options: options)?.position(in: items)
            case .sectioned(let sections):
                position = ItemLookup(sectionID: id, options: options)?.position(in: sections)
            }
            guard let position else { throw .unknownAnchor(id) }
            return PlacedWindow(request, anchor: position, total: total)
        }
    }

    /// The window placed again in a state its steps cannot be followed to (a new life, a gap):
    /// a keyset window finds its anchor by id there, or reads from the edge it was reading
    /// towards where it is gone.
    static func replace(_ request: WindowRequest, anchorID: String?, in collection: JSONCollection, options: DiffOptions) -> PlacedWindow {
        let total = collection.placeCount
        if let anchorID,
            let placed = try? place(
                WindowRequest(anchor: Self.keyed(request.anchor, anchorID), limit: request.limit, overscan: request.overscan), in: collection,
                options: options)
        {
            return PlacedWindow(request, anchor: placed.anchor, total: total)
        }
        return PlacedWindow(request, anchor: Self.edge(WindowShape(request).kind, count: total), total: total)
    }

    init(_ request: WindowRequest, anchor: Int, total: Int) {
        self.init(WindowShape(request), anchor: anchor, total: total)
    }

    init(_ shape: WindowShape, anchor: Int, total: Int) {
        self.shape = shape
        self.anchor = anchor
        self.total = total
        rows = Self.rows(shape, anchor: anchor, total: total)
    }

    /// The window after a change whose delta `projection` holds, to a list of `newCount` rows.
    func advanced(by projection: any WindowMotion, oldCount: Int, newCount: Int) -> PlacedWindow {
        guard shape.isKeyset else { return PlacedWindow(shape, anchor: 0, total: newCount) }
        if anchor < 0 || anchor >= oldCount {
            return PlacedWindow(shape, anchor: Self.edge(shape.kind, count: newCount), total: newCount)
        }
        if let now = projection.newPosition(ofOld: anchor) { return PlacedWindow(shape, anchor: now, total: newCount) }
        // The anchor is gone: the nearest item kept on the side the window reads from.
        var candidate = anchor
        let step = if case .after = shape.kind { -1 } else { 1 }
        while true {
            candidate += step
            guard candidate >= 0, candidate < oldCount else {
                return PlacedWindow(shape, anchor: Self.edge(shape.kind, count: newCount), total: newCount)
            }
            if let now = projection.newPosition(ofOld: candidate) { return PlacedWindow(shape, anchor: now, total: newCount) }
        }
    }

    /// The anchor's id now, as JSON text (keyset windows, anchored on an item or a section).
    func anchorID(in collection: JSONCollection) -> String? {
        shape.isKeyset ? collection.unitID(at: anchor) : nil
    }

    private static func edge(_ kind: WindowShape.Kind, count: Int) -> Int {
        if case .before = kind { count } else { -1 }
    }

    private static func keyed(_ anchor: WindowRequest.Anchor, _ id: String) -> WindowRequest.Anchor {
        if case .before = anchor { .before(id) } else { .after(id) }
    }

    private static func rows(_ shape: WindowShape, anchor: Int, total: Int) -> Range<Int> {
        let (limit, overscan) = (shape.limit, shape.overscan)
        let start: Int
        switch shape.kind {
        case .offset(let offset): start = offset
        case .after: start = anchor + 1
        case .before: start = anchor - limit
        }
        let lower = min(total, max(0, start - overscan))
        let upper = min(total, max(lower, start + limit + overscan))
        return lower..<upper
    }
}

/// Finds an item (or a section) by its id given as JSON text, as the session's are matched: by
/// value.
struct ItemLookup {
    private let probe: JSONCollection

    /// nil where the text is no id (it was checked as JSON before).
    init?(id: String, options: DiffOptions) {
        var writer = JSONWriter()
        writer.raw("[")
        Self.object(&writer, keys: options.idKey, id: id)
        writer.raw("}]")
        guard let probe = Self.read(writer, options: options), case .flat(let items) = probe.shape, items.count == 1 else { return nil }
        self.probe = probe
    }

    /// A section's lookup.
    init?(sectionID id: String, options: DiffOptions) {
        var writer = JSONWriter()
        writer.raw("{\"sections\":[")
        Self.object(&writer, keys: options.sectionIdKey, id: id)
        writer.raw(",")
        writer.string(options.itemsKey)
        writer.raw(":[]}]}")
        guard let probe = Self.read(writer, options: options), case .sectioned(let sections) = probe.shape, sections.count == 1 else { return nil }
        self.probe = probe
    }

    /// `{"key": id` left open: an id key may be a path of keys (`user.id`), nested an object
    /// for each.
    private static func object(_ writer: inout JSONWriter, keys path: String, id: String) {
        let keys = path.split(separator: ".", omittingEmptySubsequences: false)
        writer.raw("{")
        for (index, key) in keys.enumerated() {
            if index > 0 { writer.raw("{") }
            writer.string(String(key))
            writer.raw(":")
        }
        Array(id.utf8).withUnsafeBufferPointer { writer.raw($0) }
        for _ in keys.dropFirst() { writer.raw("}") }
    }

    private static func read(_ writer: borrowing JSONWriter, options: DiffOptions) -> JSONCollection? {
        var plain = options
        plain.nested = [:]
        return try? CollectionDocument.read(ByteBuffer(writer.bytes), options: plain)
    }

    /// The hash of the id looked up as every replica computes it (`StoredUnit.stableIDHash`):
    /// where storage keeps its units' id hashes, it finds the part that holds the id.
    var stableIDHash: UInt32 {
        withExtendedLifetime(probe) {
            switch probe.shape {
            case .flat(let items): items[0].stableIDHash
            case .sectioned(let sections): sections[0].stableIDHash
            }
        }
    }

    /// The id's position among `collection`'s units: its items, or its sections.
    func position(in collection: JSONCollection) -> Int? {
        switch collection.shape {
        case .flat(let items): position(in: items)
        case .sectioned(let sections): position(in: sections)
        }
    }

    func position(in sections: [JSONSection]) -> Int? {
        guard case .sectioned(let probes) = probe.shape else { return nil }
        return withExtendedLifetime(probe) { Self.position(of: probes[0], in: sections) }
    }

    func position(in items: [JSONItem]) -> Int? {
        guard case .flat(let probes) = probe.shape else { return nil }
        return withExtendedLifetime(probe) { Self.position(of: probes[0], in: items) }
    }

    private static func position<Element: UniquelyIdentifiable>(of key: Element, in elements: [Element]) -> Int? {
        AnchorIndex.position(of: key, in: elements)
    }
}

extension WindowRefusal {
    func apiError(id: String) -> APIError {
        let session = SessionNamespace.shown(id)
        switch self {
        case .notUnique:
            return .invalidParameter(
                "after", "session \(session) has non-unique ids, so no id names one row: place its windows by offset instead of after or before")
        case .unknownAnchor(let anchor):
            var error = APIError(
                .anchorNotFound,
                message:
                    "session \(session) holds no item (or, sectioned, no section) with id \(anchor) (deleted, or never there): place the window by offset, or read from the top"
            )
            error.details = [("anchor", .string(anchor))]
            return error
        }
    }
}
