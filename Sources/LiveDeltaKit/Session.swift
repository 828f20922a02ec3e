/// A section of a sectioned session: its id, its own fields (a title, say), and its items.
public struct LiveSection<Item: Codable & Sendable>: Codable, Sendable {
    /// The section's id (its `sectionIdKey` member, `id` by default).
    public var id: JSONValue
    /// Every member but the items, the id included.
    public var fields: [String: JSONValue]
    /// The section's items.
    public var items: [Item]

    /// A section with this id, these fields (a title) and items.
    public init(id: JSONValue, fields: [String: JSONValue] = [:], items: [Item]) {
        self.id = id
        var fields = fields
        fields["id"] = fields["id"] ?? id
        self.fields = fields
        self.items = items
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Reads a section or an event: its members, and what it carries.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        var fields: [String: JSONValue] = [:]
        for key in container.allKeys where key.stringValue != "items" {
            fields[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
        }
        self.fields = fields
        id = fields["id"] ?? .null
        items = try container.decode([Item].self, forKey: Key(stringValue: "items"))
    }

    /// Writes it as the server spells it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in fields { try container.encode(value, forKey: Key(stringValue: name)) }
        try container.encode(items, forKey: Key(stringValue: "items"))
    }
}

extension LiveSection: Equatable where Item: Equatable {}
extension LiveSection: Hashable where Item: Hashable {}

/// A session's options as the server keeps them.
public struct SessionOptions: Codable, Hashable, Sendable {
    /// The member holding an item's id (`id`; dots for a nested one).
    public var idKey: String?
    /// The member holding a section's id.
    public var sectionIdKey: String?
    /// The member holding a section's items.
    public var itemsKey: String?
    /// Whether ids are unique (false: repeated ids match by occurrence).
    public var unique: Bool?
    /// Above this many items on a side, no delta (`reloadSections`).
    public var dataCountAnimationThreshold: Int?
    /// Above this many changes, `reloadSections` (the delta still comes).
    public var deltaCountAnimationThreshold: Int?
    /// The format answers come in (LiveDeltaKit reads `batch`).
    public var format: String?
    /// `rows`, or `fields` for field-by-field changes.
    public var changes: String?

    /// Options for a new session or a diff; nil members take the server's defaults.
    public init(idKey: String? = nil, unique: Bool? = nil, dataCountAnimationThreshold: Int? = nil, deltaCountAnimationThreshold: Int? = nil) {
        self.idKey = idKey
        self.unique = unique
        self.dataCountAnimationThreshold = dataCountAnimationThreshold
        self.deltaCountAnimationThreshold = deltaCountAnimationThreshold
    }
}

/// A session whole, as `GET /sessions/{id}` and a live `reset` event give it.
public struct SessionState<Item: Codable & Sendable>: Codable, Sendable {
    /// The session's id.
    public var id: String
    /// The version.
    public var version: Int
    /// The options the session keeps.
    public var options: SessionOptions?
    /// The items of a flat session.
    public var items: [Item]?
    /// The sections of a sectioned one.
    public var sections: [LiveSection<Item>]?
    /// The live event's id, a resume token (`FollowOptions.since`); nil for a read.
    public var eventID: String?
    /// For a window: where its rows (`items`) are.
    public var window: WindowPlace?
    /// For a read of a window: the token to follow it from without a reset.
    public var token: String?

    enum CodingKeys: String, CodingKey { case id, version, options, items, sections, window, token }
}

/// A live `delta` event in the `batch` format: the delta from `baseVersion` to `version`, and
/// the collection after it.
public struct DeltaEvent<Item: Codable & Sendable>: Codable, Sendable {
    /// The version.
    public var version: Int
    /// The version the delta starts from: the one shown before it.
    public var baseVersion: Int
    /// The delta, as the write to this version answered it.
    public var answer: DeltaAnswer
    /// The items after it (a flat session), unless it carries `rows` instead.
    public var items: [Item]?
    /// With `FollowOptions.rows` `.changed`: only the rows the delta inserts or changes, at
    /// its insertions (ascending), then at its reloads' targets.
    public var rows: [Item]?
    /// The sections after it (a sectioned session).
    public var sections: [LiveSection<Item>]?
    /// The event's id, a resume token (`FollowOptions.since`).
    public var eventID: String?
    /// For a window: where its rows are after the delta.
    public var window: WindowPlace?

    enum CodingKeys: String, CodingKey { case version, baseVersion, items, rows, sections, window }

    /// Reads a section or an event: its members, and what it carries.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        baseVersion = try container.decode(Int.self, forKey: .baseVersion)
        items = try container.decodeIfPresent([Item].self, forKey: .items)
        rows = try container.decodeIfPresent([Item].self, forKey: .rows)
        sections = try container.decodeIfPresent([LiveSection<Item>].self, forKey: .sections)
        window = try container.decodeIfPresent(WindowPlace.self, forKey: .window)
        answer = try DeltaAnswer(from: decoder)
    }

    /// Writes it as the server spells it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(baseVersion, forKey: .baseVersion)
        try container.encodeIfPresent(items, forKey: .items)
        try container.encodeIfPresent(rows, forKey: .rows)
        try container.encodeIfPresent(sections, forKey: .sections)
        try container.encodeIfPresent(window, forKey: .window)
        try answer.encode(to: encoder)
    }
}
