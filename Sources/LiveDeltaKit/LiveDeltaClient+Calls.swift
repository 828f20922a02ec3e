import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A collection to send: items, or sections.
public enum SessionCollection<Item: Codable & Sendable>: Sendable {
    case items([Item])
    case sections([LiveSection<Item>])

    func members(options: SessionOptions?) -> [String: any Encodable] {
        var members: [String: any Encodable] = [:]
        switch self {
        case .items(let items): members["items"] = items
        case .sections(let sections): members["sections"] = sections
        }
        if let options { members["options"] = options }
        return members
    }
}

/// Conditions and keys of one write.
public struct WriteOptions: Sendable {
    /// The version the write is for (`If-Match`): a stale one is a 412 `version_mismatch`.
    public var ifMatch: Int?
    /// The write's key; a new UUID where not given.
    public var idempotencyKey: String?

    /// A write's condition and key (a new UUID where not given).
    public init(ifMatch: Int? = nil, idempotencyKey: String? = nil) {
        self.ifMatch = ifMatch
        self.idempotencyKey = idempotencyKey
    }
}

extension LiveDeltaClient {
    private func write(_ method: String, _ path: String, _ body: Data?, _ options: WriteOptions) -> Call {
        var call = Call(method: method, path: path, body: body)
        call.ifMatch = options.ifMatch.map { "\"\($0)\"" }
        call.idempotencyKey = options.idempotencyKey
        return call
    }

    /// `POST /diff`: the delta between two collections, in the `batch` format.
    public func diff<Item: Codable & Sendable>(_ old: SessionCollection<Item>, _ new: SessionCollection<Item>, options: SessionOptions? = nil)
        async throws
        -> DeltaAnswer
    {
        func document(_ collection: SessionCollection<Item>) -> any Encodable {
            switch collection {
            case .items(let items): items
            case .sections(let sections): ["sections": sections]
            }
        }
        var members: [String: any Encodable] = ["old": document(old), "new": document(new)]
        if let options { members["options"] = options }
        return try await decoded(DeltaAnswer.self, Call(method: "POST", path: "/diff", body: try Self.body(members)))
    }

    /// `POST /sessions`: a session with an id the server picks.
    public func createSession<Item>(_ collection: SessionCollection<Item>, options: SessionOptions? = nil, write: WriteOptions = WriteOptions())
        async throws
        -> SessionAnswer
    {
        try await decoded(SessionAnswer.self, self.write("POST", "/sessions", try Self.body(collection.members(options: options)), write))
    }

    /// `PUT /sessions/{id}`: creates the session, or replaces it at version 0.
    public func putSession<Item>(
        _ id: String, _ collection: SessionCollection<Item>, options: SessionOptions? = nil, write: WriteOptions = WriteOptions()
    )
        async throws -> SessionAnswer
    {
        try await decoded(SessionAnswer.self, self.write("PUT", Self.sessionPath(id), try Self.body(collection.members(options: options)), write))
    }

    /// `GET /sessions/{id}`: the session whole, or the rows of `window` (with where they are,
    /// and the `token` to follow that window from).
    public func session<Item>(_ id: String, as type: Item.Type = Item.self, window: Window? = nil) async throws -> SessionState<Item> {
        try await decoded(SessionState<Item>.self, Call(method: "GET", path: Self.sessionPath(id), query: window?.queryItems ?? []))
    }

    /// `POST /sessions/{id}/update`: commits the new collection; answers its delta.
    public func update<Item>(_ id: String, to collection: SessionCollection<Item>, write: WriteOptions = WriteOptions()) async throws -> SessionAnswer
    {
        try await decoded(
            SessionAnswer.self, self.write("POST", Self.sessionPath(id, "/update"), try Self.body(collection.members(options: nil)), write))
    }

    /// `POST /sessions/{id}/append`: adds items (or whole sections) at the end.
    public func append<Item>(_ id: String, _ collection: SessionCollection<Item>, write: WriteOptions = WriteOptions()) async throws -> SessionAnswer
    {
        try await decoded(
            SessionAnswer.self, self.write("POST", Self.sessionPath(id, "/append"), try Self.body(collection.members(options: nil)), write))
    }

    /// `POST /sessions/{id}/delta`: the delta an update would answer, committing nothing.
    public func delta<Item>(_ id: String, to collection: SessionCollection<Item>) async throws -> SessionAnswer {
        try await decoded(
            SessionAnswer.self, Call(method: "POST", path: Self.sessionPath(id, "/delta"), body: try Self.body(collection.members(options: nil))))
    }

    /// `POST /sessions/{id}/changes` with keyed operations (`insert`, `update`, `move`,
    /// `remove`, and the section operations), as docs/sessions.md spells them.
    public func changes(_ id: String, operations: [JSONValue], write: WriteOptions = WriteOptions()) async throws -> SessionAnswer {
        try await decoded(
            SessionAnswer.self, self.write("POST", Self.sessionPath(id, "/changes"), try Self.body(["operations": operations]), write))
    }

    /// `POST /sessions/{id}/changes` with an RFC 6902 patch.
    public func patch(_ id: String, _ patch: [JSONValue], write: WriteOptions = WriteOptions()) async throws -> SessionAnswer {
        var call = self.write("POST", Self.sessionPath(id, "/changes"), try Self.encoder.encode(patch), write)
        call.contentType = "application/json-patch+json"
        return try await decoded(SessionAnswer.self, call)
    }

    /// `DELETE /sessions/{id}`: ends the session; its followers get `end` with `deleted`.
    public func deleteSession(_ id: String, write: WriteOptions = WriteOptions()) async throws {
        _ = try await send(self.write("DELETE", Self.sessionPath(id), nil, write))
    }
}
