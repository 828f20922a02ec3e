import ByteJSON
import LiveCollections
import MicroHTTP

/// `/sessions` and `/sessions/{id}[/update|/append|/delta]` (routed by `LiveDeltaService.routeTable`).
struct SessionEndpoints {
    let store: any SessionStore
    let limits: ReadLimits
    let metrics: ServiceMetrics?
    var sources: (any SessionSources)? = nil

    /// What a POST to `/sessions/{id}/…` does.
    enum Action {
        /// Commits the new collection, answering the delta.
        case update
        /// Adds items at the end.
        case append
        /// Answers the delta an update would give, committing nothing.
        case delta
    }

    // MARK: - Actions

    /// Creates the session, or replaces it (PUT); POST's ids are random, 128 bits. From a
    /// source, `tenant` (the token's) may be one of its query's parameters.
    func create(_ request: HTTPRequest, id: String, tenant: String? = nil) throws(APIError) -> HTTPResponse {
        try LiveDeltaService.requireJSON(request)
        var body = try SessionBody(request.body, readingWith: DiffOptions(), limits: limits)
        // Creating or replacing takes no condition: it does not depend on what was there.
        guard request.header("If-Match") == nil else {
            throw APIError(.invalidIfMatch, message: "creating or replacing a session takes no If-Match; it replaces whatever is there")
        }
        if body.baseVersion != nil {
            throw .invalidShape(JSONPointer("baseVersion"), "creating or replacing a session takes no baseVersion; it replaces whatever is there")
        }
        let snapshot: SessionSnapshot
        let created: Bool
        if let source = try body.source {
            guard let sources else {
                throw APIError(
                    .unknownSource,
                    message: "this server declares no sources (--sources and --postgres): create the session with items or sections")
            }
            guard try body.options == nil else {
                throw .invalidOption(JSONPointer("options"), "a session fed by a source takes the source's options: leave options out")
            }
            let rows = try sources.read(source: source, params: try body.params, tenant: tenant)
            (snapshot, created) = try sessions(options: rows.options) { () throws(SessionError) in
                try store.put(id: id, options: rows.options, collection: rows.collection)
            }
            try sources.bind(id, rows, version: snapshot.version)
        } else {
            let options = try body.options ?? DiffOptions()
            let collection = try body.collection(readWith: options)
            (snapshot, created) = try sessions(options: options) { () throws(SessionError) in
                try store.put(id: id, options: options, collection: collection)
            }
            sources?.release(id)
        }
        var writer = JSONWriter()
        writer.raw("{")
        writer.sessionSummary(snapshot)
        writer.raw("}")
        return HTTPResponse(status: created ? 201 : 200, headers: headers(version: 0, location: created ? id : nil), body: writer.bytes)
    }

    /// The session whole, or the rows of `window`, with the token a subscriber of that window
    /// resumes from (so that it starts without a reset).
    func show(id: String, window: WindowRequest? = nil) throws(APIError) -> HTTPResponse {
        if let window, case .offset = window.anchor,
            let read = try sessions({ () throws(SessionError) in try store.rows(id: id) { PlacedWindow(window, anchor: 0, total: $0).rows } })
        {
            // An offset window of a long session stored in parts (of items, or of whole
            // sections): only the parts that hold it.
            let placed = PlacedWindow(window, anchor: 0, total: read.count)
            let body = read.snapshot.windowJSON(
                placed, token: read.snapshot.windowToken(placed).token, first: read.first, rows: (read.count, read.items))
            return HTTPResponse(status: 200, headers: headers(version: read.snapshot.version), body: try withSource(body, id: id))
        }
        if let window, let anchorID = window.anchorID,
            let read = try sessions({ () throws(SessionError) in
                try store.rows(id: id, anchorID: anchorID) { PlacedWindow(window, anchor: $0, total: $1).rows }
            })
        {
            // A keyset window of a long session stored in parts, whose ids' hashes find the
            // part that holds its anchor: that part, and those that hold the window.
            switch read {
            case .notUnique: throw WindowRefusal.notUnique.apiError(id: id)
            case .rows(let rows, let anchor, let shownID):
                let placed = PlacedWindow(window, anchor: anchor, total: rows.count)
                let body = rows.snapshot.windowJSON(
                    placed, token: rows.snapshot.windowToken(placed).token, first: rows.first, rows: (rows.count, rows.items), anchorID: shownID)
                return HTTPResponse(status: 200, headers: headers(version: rows.snapshot.version), body: try withSource(body, id: id))
            }
        }
        let snapshot = try sessions { () throws(SessionError) in try store.snapshot(id: id) }
        guard let window else {
            return HTTPResponse(status: 200, headers: headers(version: snapshot.version), body: try withSource(snapshot.json, id: id))
        }
        let placed: PlacedWindow
        do throws(WindowRefusal) {
            placed = try PlacedWindow.place(window, in: snapshot.collection, options: snapshot.options)
        } catch {
            throw error.apiError(id: id)
        }
        return HTTPResponse(
            status: 200, headers: headers(version: snapshot.version),
            body: try withSource(snapshot.windowJSON(placed, token: snapshot.windowToken(placed).token), id: id))
    }

    /// A session's JSON with how its source feeds it (`source`), where one does.
    private func withSource(_ body: [UInt8], id: String) throws(APIError) -> [UInt8] {
        guard let sources, body.last == UInt8(ascii: "}"), let status = try sources.status(of: id) else { return body }
        return body.dropLast() + Array(#","source":"#.utf8) + status + [UInt8(ascii: "}")]
    }

    func delete(_ request: HTTPRequest, id: String) throws(APIError) -> HTTPResponse {
        let condition = try Self.condition(ifMatch: request.header("If-Match"), baseVersion: nil)
        try sessions { () throws(SessionError) in try store.delete(id: id, condition: condition) }
        sources?.release(id)
        return HTTPResponse(status: 204)
    }

    func change(_ request: HTTPRequest, id: String, action: Action) throws(APIError) -> HTTPResponse {
        try LiveDeltaService.requireJSON(request)
        let held = store.options(id: id)
        var body = try SessionBody(request.body, readingWith: held ?? DiffOptions(), limits: limits)
        if try body.source != nil {
            throw .invalidShape(JSONPointer("source"), "a session is fed by a source from its creation (PUT /sessions/{id}); send items or sections")
        }
        // Once the body reads (a malformed one is refused for that first); a dry run commits
        // nothing, so a source's session may be asked what a collection would do.
        if action != .delta { try refuseIfFed(id) }
        let given = try body.options
        var readWith = held ?? given ?? DiffOptions()
        // Options are the session's, but for how the answer is spelled (`format`, `changes`),
        // which each request may choose.
        var spelling = readWith.spelling
        if let given {
            spelling.format = given.format
            spelling.changes = given.changes
        }
        if var given, held != nil {
            given.format = readWith.format
            given.changes = readWith.changes
            guard given == readWith else {
                throw .invalidOption(
                    JSONPointer("options"),
                    "options are fixed when a session is created; this one's differ (GET /sessions/\(SessionNamespace.shown(id)) shows them)")
            }
        }
        // Read with the session's options; should it be replaced meanwhile with options that
        // read differently, read once more with those.
        for attempt in 0..<2 {
            let collection = try body.collection(readWith: readWith)
            // The condition is weighed once the request is otherwise sound (RFC 9110, 13.2.2):
            // a body that would be refused is refused for what is wrong with it, never with a
            // 412 (weak tags alone fail before the store is asked).
            let condition = try Self.condition(ifMatch: request.header("If-Match"), baseVersion: body.baseVersion)
            let change: SessionChange
            do throws(SessionError) {
                switch action {
                case .append: change = try store.append(id: id, collection, readWith: readWith, condition: condition)
                case .update, .delta:
                    change = try store.update(id: id, to: collection, readWith: readWith, condition: condition, commit: action == .update)
                }
            } catch {
                if case .optionsChanged(let options) = error, attempt == 0 {
                    readWith = options
                    continue
                }
                throw translate(error, location: body.location, options: readWith)
            }
            // The body holds the request's share of the item budget until the answer is written.
            return try withExtendedLifetime(body) { () throws(APIError) in try answer(change, spelling: spelling) }
        }
        throw APIError(.busy, message: "the session was replaced twice while this request was read; send it again")
    }

    func answer(_ change: SessionChange, spelling: DeltaSpelling) throws(APIError) -> HTTPResponse {
        switch change.outcome {
        case .flat(let update, let old, let new):
            metrics?.diff(old: old, new: new, delta: update.delta)
        case .sectioned(let update, let old, let new):
            metrics?.diff(old: old, new: new, sectionDelta: update.sectionDelta, itemDelta: update.itemDelta)
        }
        return HTTPResponse(
            status: change.created ? 201 : 200, headers: headers(version: change.version, location: change.created ? change.id : nil),
            body: try change.json(spelling: spelling))
    }

    // MARK: - Pieces

    /// A session its source feeds takes no write over HTTP: the source's next result would
    /// undo it.
    func refuseIfFed(_ id: String) throws(APIError) {
        guard let source = try sources?.source(feeding: id) else { return }
        var error = APIError(
            .sourceFed,
            message:
                "session \(SessionNamespace.shown(id)) is fed by source \(source): its versions come from the database, so change the rows there (or PUT items to make it a session of its own)"
        )
        error.details = [("source", .string(source))]
        throw error
    }

    private func headers(version: UInt64, location: String? = nil) -> [(name: String, value: String)] {
        var headers = [("Content-Type", "application/json"), ("ETag", "\"\(version)\"")]
        if let location { headers.append(("Location", "/sessions/\(SessionNamespace.shown(location))")) }
        return headers
    }

    private func sessions<T>(options: DiffOptions = DiffOptions(), _ body: () throws(SessionError) -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch {
            throw translate(error, location: .sessionBody, options: options)
        }
    }

    /// - Parameter options: the session's, whose `itemsKey` a duplicate's pointer names.
    func translate(_ error: SessionError, location: CollectionLocation, options: DiffOptions = DiffOptions()) -> APIError {
        switch error {
        case .notFound(let id):
            return APIError(.sessionNotFound, message: "there is no session \(SessionNamespace.shown(id)) (it may have expired or been evicted)")
        case .versionMismatch(let expected, let current):
            let wanted =
                switch expected {
                case .version(let number): "version \(number)"
                case .anyOf(let numbers): "one of versions \(numbers.map(String.init).joined(separator: ", "))"
                case .any, .exists: "an existing session"
                }
            var apiError = APIError(
                .versionMismatch,
                message: current.map { "the request is for \(wanted), but the session is at version \($0); GET it and start again from there" }
                    ?? "the request is for \(wanted), but the session does not exist (any more)")
            apiError.details = [("currentVersion", current.map { .int(Int($0)) } ?? .null)]
            if let current { apiError.headers = [("ETag", "\"\(current)\"")] }
            return apiError
        case .kindMismatch(let sectioned):
            return .invalidShape(
                JSONPointer(sectioned ? "items" : "sections"),
                sectioned ? "this session holds sections: send \"sections\"" : "this session holds a flat collection: send \"items\"")
        case .duplicate(let duplicate):
            return DiffComputation(options: options, oldLocation: location, newLocation: location).duplicate(duplicate, inSession: true)
        case .tooManyItems(let limit, let count):
            return APIError(
                .tooManyItems,
                message: "a session holds at most \(limit) items (--max-session-items, LIVEDELTA_MAX_SESSION_ITEMS); this would make \(count)")
        case .storeFull(let limit):
            var apiError = APIError(
                .tooManySessions, message: "all \(limit) sessions are in use (--max-sessions, LIVEDELTA_MAX_SESSIONS); try again shortly")
            apiError.headers = [("Retry-After", "1")]
            return apiError
        case .tooLarge(let limit, let bytes):
            return APIError(
                .sessionTooLarge,
                message: "sessions take at most \(limit) bytes together (their bodies as sent, plus \(SessionFootprint.bytesPerItem) for each item "
                    + "and \(SessionFootprint.bytesPerBody) for each body; --max-session-bytes, LIVEDELTA_MAX_SESSION_BYTES); this one would take \(bytes)"
            )
        case .bytesFull(let limit):
            var apiError = APIError(
                .tooManySessions,
                message:
                    "sessions in use take all \(limit) bytes sessions may take (--max-session-bytes, LIVEDELTA_MAX_SESSION_BYTES); try again shortly")
            apiError.headers = [("Retry-After", "1")]
            return apiError
        case .tenantFull(let limit, let bytes):
            var apiError = APIError(
                .quotaExceeded,
                message: bytes
                    ? "this tenant's sessions in use take all \(limit) bytes one tenant's may (--max-session-bytes-per-tenant, LIVEDELTA_MAX_SESSION_BYTES_PER_TENANT); delete some, or try again shortly"
                    : "this tenant holds all \(limit) sessions one tenant may, none of them idle (--max-sessions-per-tenant, LIVEDELTA_MAX_SESSIONS_PER_TENANT); delete some, or try again shortly"
            )
            apiError.details = [("limit", .string(bytes ? "max-session-bytes-per-tenant" : "max-sessions-per-tenant"))]
            apiError.headers = [("Retry-After", "1")]
            return apiError
        case .optionsChanged:
            return APIError(.busy, message: "the session was replaced while this request was read; send it again")
        case .conflict:
            var apiError = APIError(
                .busy, message: "other requests kept changing the session first; send this one again")
            apiError.headers = [("Retry-After", "1")]
            return apiError
        case .refused(let refusal):
            return refusal
        case .internalFailure(let detail):
            return .internalError("the session store failed: \(detail)")
        case .storeUnavailable:
            var apiError = APIError(
                .sessionStoreUnavailable, message: "the session store cannot be reached just now; try again shortly")
            apiError.headers = [("Retry-After", "1")]
            return apiError
        case .outcomeUnknown:
            var apiError = APIError(
                .outcomeUnknown,
                message:
                    "the write was sent to the session store, which did not answer in time: it may have taken effect, or may yet; retry with the same Idempotency-Key (never without one), or read the session to see"
            )
            apiError.headers = [("Retry-After", "1")]
            return apiError
        }
    }

    /// Ids: 1 to 128 of A-Z a-z 0-9 . _ -, but not `.` or `..` (path segments that clients and
    /// proxies resolve away).
    static func validID(_ id: Substring) throws(APIError) -> String {
        guard (1...128).contains(id.utf8.count), id != ".", id != "..",
            id.utf8.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x5F
                    || byte == 0x2D
            })
        else {
            throw APIError(
                .invalidSessionID, message: "a session id is 1 to 128 of A-Z, a-z, 0-9, '.', '_' and '-', other than . and ..")
        }
        return String(id)
    }

    /// The id a creation under an `Idempotency-Key` names its session by: the key's (and the
    /// tenant's) hash, so that every retry names the same session, and a ledger can keep the key
    /// beside it before it is made. As unguessable as the key: a random key (a UUID) makes a
    /// random id.
    static func newID(key: String, tenant: String?) -> String {
        Fingerprint(parts: [Array("a new session".utf8), Array((tenant ?? "").utf8), Array(key.utf8)]).hex
    }

    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: (0..<32).map { _ in digits[Int(generator.next() % 16)] }, as: UTF8.self)
    }

    /// `If-Match` (RFC 9110, 13.1.1): `*`, or a list of entity tags, `"3"` or `"3", "5"`, any of
    /// which may match (a bare `3` is taken as `"3"`); and the `baseVersion` body field. A weak
    /// tag (`W/"3"`) never matches: If-Match compares strongly; a list of weak tags alone is a
    /// 412.
    static func condition(ifMatch: String?, baseVersion: UInt64?) throws(APIError) -> VersionCondition {
        var fromHeader: VersionCondition?
        if let ifMatch {
            let tags = ifMatch.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingSpaces) }
            if tags == ["*"] {
                fromHeader = .exists
            } else {
                var versions: [UInt64] = []
                var weak: [String] = []
                for tag in tags {
                    if tag.hasPrefix("W/") {
                        weak.append(tag)
                        continue
                    }
                    let quoted = tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count >= 2
                    guard let version = UInt64(quoted ? String(tag.dropFirst().dropLast()) : tag) else {
                        throw APIError(
                            .invalidIfMatch,
                            message:
                                "If-Match must be *, or versions in quotes separated by commas, such as \"3\" or \"3\", \"4\"; \(tag.isEmpty ? "an empty tag" : tag) is not one"
                        )
                    }
                    versions.append(version)
                }
                if versions.isEmpty {
                    throw APIError(
                        .versionMismatch,
                        message:
                            "If-Match \(weak.joined(separator: ", ")) holds only weak tags, which never match (RFC 9110); send strong tags, such as \"3\""
                    )
                }
                fromHeader = versions.count == 1 ? .version(versions[0]) : .anyOf(versions)
            }
        }
        switch (fromHeader, baseVersion) {
        case (nil, nil): return .any
        case (let header?, nil): return header
        case (nil, let base?): return .version(base)
        case (let header?, let base?):
            let agrees =
                switch header {
                case .version(let version): version == base
                case .anyOf(let versions): versions.contains(base)
                case .any, .exists: true
                }
            guard agrees else { throw .invalidShape(JSONPointer("baseVersion"), "If-Match and baseVersion name different versions") }
            return .version(base)
        }
    }
}

/// A session request's body: `{"items": [...]}` or `{"sections": [...]}`, with `options` and
/// `baseVersion` where wanted, read in one pass where the options are known (see `Envelope`).
struct SessionBody {
    private var envelope: Envelope
    let baseVersion: UInt64?

    init(_ body: ByteBuffer, readingWith options: DiffOptions, limits: ReadLimits) throws(APIError) {
        envelope = try Envelope.read(
            body,
            members: ["items": .items, "sections": .sections, "options": .value, "baseVersion": .value, "source": .value, "params": .value],
            readingWith: options, limits: limits)
        guard [envelope.has("items"), envelope.has("sections"), envelope.has("source")].count(where: { $0 }) == 1 else {
            throw .invalidShape(
                JSONPointer(),
                "the body needs \"items\" (a flat collection), \"sections\", or \"source\" (one the server declares, to create a session from), one of them"
            )
        }
        if envelope.has("params") && !envelope.has("source") {
            throw .invalidShape(JSONPointer("params"), "params go with a source: leave them out, or name the source")
        }
        if let value = envelope.value("baseVersion") {
            guard case .number(let number) = value, let version = number.nonNegativeInt else {
                throw .invalidShape(JSONPointer("baseVersion"), "baseVersion must be a whole number from 0 to \(Int.max)")
            }
            baseVersion = UInt64(version)
        } else {
            baseVersion = nil
        }
    }

    var options: DiffOptions? {
        get throws(APIError) { try envelope.options() }
    }

    /// The source to create the session from; nil where the body holds the collection.
    var source: String? {
        get throws(APIError) {
            guard let value = envelope.value("source") else { return nil }
            guard let name = value.stringValue else { throw .invalidShape(JSONPointer("source"), "source must be a source's name, a string") }
            return name
        }
    }

    /// The source's parameters: an object of strings.
    var params: [String: String] {
        get throws(APIError) {
            guard let value = envelope.value("params") else { return [:] }
            guard case .object(let members) = value else {
                throw .invalidShape(JSONPointer("params"), "params must be an object of strings, one for each of the source's parameters")
            }
            var params: [String: String] = [:]
            for (name, value) in members {
                let key = String(decoding: name, as: UTF8.self)
                guard let text = value.stringValue else { throw .invalidShape(JSONPointer("params", key), "params.\(key) must be a string") }
                params[key] = text
            }
            return params
        }
    }

    var location: CollectionLocation { .sessionBody }

    mutating func collection(readWith options: DiffOptions) throws(APIError) -> JSONCollection {
        var collections = try envelope.collections(readWith: options)
        // The body was checked to hold one of them; anything else is the server's own failure.
        guard let collection = collections.take("items") ?? collections.take("sections") else {
            throw .internalError("the body's collection was not read")
        }
        return collection
    }
}
