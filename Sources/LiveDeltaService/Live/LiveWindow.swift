import ByteJSON
import LiveCollections
import MicroHTTP

/// The rows of a flat session a read or a subscriber asks for: `limit` rows from `offset`, or
/// after (`after`) or before (`before`) an item, with `overscan` rows more on each side.
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
    /// The session is sectioned: windows are rows of a flat list.
    case sectioned
    /// A keyset window's anchor is not in the session.
    case unknownAnchor(String)
    /// Keyset windows need ids that name one item each.
    case notUnique
}

/// A window placed in one state of a session: the rows it holds and, for a keyset window,
/// where its anchor is.
struct PlacedWindow: Sendable, Hashable {
    let request: WindowRequest
    /// The anchor's position (keyset windows): -1 before the first row (an `after` window whose
    /// anchors are all gone reads from the top), `count` past the last (a `before` window's).
    var anchor: Int
    /// The rows the window holds, overscan included.
    var rows: Range<Int>
    /// The session's items then.
    var total: Int

    /// The window placed in `items`.
    static func place(_ request: WindowRequest, in collection: JSONCollection, options: DiffOptions) throws(WindowRefusal) -> PlacedWindow {
        guard case .flat(let items) = collection.shape else { throw .sectioned }
        switch request.anchor {
        case .offset: return PlacedWindow(request, anchor: 0, total: items.count)
        case .after(let id), .before(let id):
            guard options.unique else { throw .notUnique }
            guard let position = ItemLookup(id: id, options: options)?.position(in: items) else { throw .unknownAnchor(id) }
            return PlacedWindow(request, anchor: position, total: items.count)
        }
    }

    /// The window placed again in a state its steps cannot be followed to (a new life, a gap):
    /// a keyset window finds its anchor by id there, or reads from the edge it was reading
    /// towards where it is gone.
    static func replace(_ request: WindowRequest, anchorID: String?, in collection: JSONCollection, options: DiffOptions) -> PlacedWindow? {
        guard case .flat(let items) = collection.shape else { return nil }
        if let anchorID,
            let placed = try? place(
                WindowRequest(anchor: Self.keyed(request.anchor, anchorID), limit: request.limit, overscan: request.overscan), in: collection,
                options: options)
        {
            return PlacedWindow(request, anchor: placed.anchor, total: items.count)
        }
        return PlacedWindow(request, anchor: Self.edge(request.anchor, count: items.count), total: items.count)
    }

    init(_ request: WindowRequest, anchor: Int, total: Int) {
        self.request = request
        self.anchor = anchor
        self.total = total
        rows = Self.rows(request, anchor: anchor, total: total)
    }

    /// The window after a change whose delta `projection` holds, to a list of `total` items.
    func advanced(by projection: WindowProjection, oldCount: Int, newCount: Int) -> PlacedWindow {
        guard request.isKeyset else { return PlacedWindow(request, anchor: 0, total: newCount) }
        if anchor < 0 || anchor >= oldCount {
            return PlacedWindow(request, anchor: Self.edge(request.anchor, count: newCount), total: newCount)
        }
        if let now = projection.newPosition(ofOld: anchor) { return PlacedWindow(request, anchor: now, total: newCount) }
        // The anchor is gone: the nearest item kept on the side the window reads from.
        var candidate = anchor
        let step = if case .after = request.anchor { -1 } else { 1 }
        while true {
            candidate += step
            guard candidate >= 0, candidate < oldCount else {
                return PlacedWindow(request, anchor: Self.edge(request.anchor, count: newCount), total: newCount)
            }
            if let now = projection.newPosition(ofOld: candidate) { return PlacedWindow(request, anchor: now, total: newCount) }
        }
    }

    /// The anchor's id now, as JSON text (keyset windows, anchored on an item).
    func anchorID(in items: [JSONItem]) -> String? {
        guard request.isKeyset, items.indices.contains(anchor) else { return nil }
        return items[anchor].uniqueID.description
    }

    private static func edge(_ anchor: WindowRequest.Anchor, count: Int) -> Int {
        if case .before = anchor { count } else { -1 }
    }

    private static func keyed(_ anchor: WindowRequest.Anchor, _ id: String) -> WindowRequest.Anchor {
        if case .before = anchor { .before(id) } else { .after(id) }
    }

    private static func rows(_ request: WindowRequest, anchor: Int, total: Int) -> Range<Int> {
        let (limit, overscan) = (request.limit, request.overscan)
        let start: Int
        switch request.anchor {
        case .offset(let offset): start = offset
        case .after: start = anchor + 1
        case .before: start = anchor - limit
        }
        let lower = min(total, max(0, start - overscan))
        let upper = min(total, max(lower, start + limit + overscan))
        return lower..<upper
    }
}

/// Finds an item by its id given as JSON text, as the session's items are matched: by value.
struct ItemLookup {
    private let probe: JSONCollection

    /// nil where the text is no id (it was checked as JSON before).
    init?(id: String, options: DiffOptions) {
        // An id key may be a path of keys (`user.id`): the probe nests an object for each.
        let keys = options.idKey.split(separator: ".", omittingEmptySubsequences: false)
        var writer = JSONWriter()
        writer.raw("[")
        for key in keys {
            writer.raw("{")
            writer.string(String(key))
            writer.raw(":")
        }
        Array(id.utf8).withUnsafeBufferPointer { writer.raw($0) }
        for _ in keys { writer.raw("}") }
        writer.raw("]")
        var plain = options
        plain.nested = [:]
        guard let collection = try? CollectionDocument.read(ByteBuffer(writer.bytes), options: plain), case .flat(let items) = collection.shape,
            items.count == 1
        else { return nil }
        probe = collection
    }

    func position(in items: [JSONItem]) -> Int? {
        guard case .flat(let probes) = probe.shape else { return nil }
        return withExtendedLifetime(probe) {
            let key = probes[0]
            let hash = key.identityHash
            return items.firstIndex { $0.identityHash == hash && $0.hasSameID(as: key) }
        }
    }
}

extension WindowRefusal {
    func apiError(id: String) -> APIError {
        let session = SessionNamespace.shown(id)
        switch self {
        case .sectioned:
            return .invalidParameter(
                "limit",
                "session \(session) is sectioned, and windows are rows of a flat session: read or follow it without offset, after, before and limit")
        case .notUnique:
            return .invalidParameter(
                "after", "session \(session) has non-unique ids, so no id names one row: place its windows by offset instead of after or before")
        case .unknownAnchor(let anchor):
            var error = APIError(
                .anchorNotFound,
                message:
                    "session \(session) holds no item with id \(anchor) (deleted, or never there): place the window by offset, or read from the top")
            error.details = [("anchor", .string(anchor))]
            return error
        }
    }
}
