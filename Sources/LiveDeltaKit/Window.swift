import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The rows of a long flat session to read or follow: `limit` rows from an offset, or after or
/// before an item (by id), with `overscan` rows more on each side; of a sectioned session,
/// whole sections, after or before a section (by id). See docs/live-sessions.md.
public struct Window: Sendable, Hashable {
    /// Where the window is.
    public enum Placement: Sendable, Hashable {
        /// From this row (0 is the first); the window stays there as rows come and go above it.
        case offset(Int)
        /// The rows after this item; the window goes wherever the item goes.
        case after(JSONValue)
        /// The rows before this item (scrolling up).
        case before(JSONValue)
    }

    /// Where the window is.
    public var placement: Placement
    /// Its rows (1 to the server's `--max-window-rows`).
    public var limit: Int
    /// Rows more on each side, so that a scroll shows rows already there.
    public var overscan: Int

    /// `limit` rows at `placement`, with `overscan` more each side.
    public init(_ placement: Placement = .offset(0), limit: Int, overscan: Int = 0) {
        self.placement = placement
        self.limit = limit
        self.overscan = overscan
    }

    /// The query parameters that ask for it; ids go as JSON, so that `"7"` and `7` stay apart.
    var queryItems: [URLQueryItem] {
        var items = [URLQueryItem(name: "limit", value: String(limit))]
        switch placement {
        case .offset(let offset): items.append(URLQueryItem(name: "offset", value: String(offset)))
        case .after(let id): items.append(URLQueryItem(name: "after", value: Self.json(id)))
        case .before(let id): items.append(URLQueryItem(name: "before", value: Self.json(id)))
        }
        if overscan > 0 { items.append(URLQueryItem(name: "overscan", value: String(overscan))) }
        return items
    }

    private static func json(_ id: JSONValue) -> String {
        // A whole number is written without a fraction, as the server reads ids.
        if case .integer(let number) = id { return String(number) }
        if case .number(let number) = id, number.rounded() == number, abs(number) < 1e15 { return String(Int64(number)) }
        return (try? JSONEncoder().encode(id)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}

/// Where a window's rows are in its session.
public struct WindowPlace: Codable, Sendable, Equatable {
    /// The window's first row's position in the session.
    public var offset: Int
    /// The window's rows (overscan included).
    public var count: Int
    /// The session's rows.
    public var total: Int
    /// A keyset window's anchor item's id (`.null` where it reads from an edge); nil for an
    /// offset window.
    public var anchor: JSONValue?

    enum CodingKeys: String, CodingKey { case offset, count, total, after, before }

    /// A window's place.
    public init(offset: Int, count: Int, total: Int, anchor: JSONValue? = nil) {
        self.offset = offset
        self.count = count
        self.total = total
        self.anchor = anchor
    }

    /// Reads it as the server spells it (the anchor under `after` or `before`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        offset = try container.decode(Int.self, forKey: .offset)
        count = try container.decode(Int.self, forKey: .count)
        total = try container.decode(Int.self, forKey: .total)
        anchor = try container.decodeIfPresent(JSONValue.self, forKey: .after) ?? container.decodeIfPresent(JSONValue.self, forKey: .before)
        // A null member decodes as nil above: keep it as `.null`, an anchor at an edge.
        if anchor == nil && (container.contains(.after) || container.contains(.before)) { anchor = .null }
    }

    /// Writes it (the anchor under `after`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(offset, forKey: .offset)
        try container.encode(count, forKey: .count)
        try container.encode(total, forKey: .total)
        try container.encodeIfPresent(anchor, forKey: .after)
    }
}

/// A live `window` event: a window's rows did not change at `version`; where they are, or the
/// session's total, did.
public struct WindowEvent: Codable, Sendable {
    /// The version it brings the list to.
    public var version: Int
    /// The version shown before it.
    public var baseVersion: Int
    /// Where the window's rows are now.
    public var window: WindowPlace
    /// The event's id, a resume token.
    public var eventID: String?

    enum CodingKeys: String, CodingKey { case version, baseVersion, window }
}
