/// Sessions fed by a source the operator declared (a database query), not by HTTP writes: a
/// `PUT /sessions/{id}` with `{"source", "params"}` is created from the source's rows, and from
/// then on the source commits each changed result to the store itself. The service builds and
/// runs without one.
package protocol SessionSources: Sendable {
    /// The rows of `source` now, bound with `params` (the body's) and `tenant` (the token's):
    /// what to create a session with. Refuses an unknown source, parameters that fail their
    /// checks, and a result that is no collection (a null or repeated key, too many rows).
    func read(source: String, params: [String: String], tenant: String?) throws(APIError) -> SourceRows

    /// Session `id` was created from `rows` (at `version`): it is fed by its source from now on,
    /// as every replica sees. Throws where that cannot be kept.
    func bind(_ id: String, _ rows: SourceRows, version: UInt64) throws(APIError)

    /// The source that feeds session `id` (from whichever replica); nil for a session fed by
    /// HTTP writes. Throws where that cannot be known now.
    func source(feeding id: String) throws(APIError) -> String?

    /// Session `id` is fed by HTTP from now on, or is gone (`PUT` of items, `DELETE`).
    func release(_ id: String)

    /// How session `id` is fed, as `GET /sessions/{id}` shows it in `source`:
    /// `{"name", "problem"}`, the problem (`{"code", "message"}`) being why the source's last
    /// result was not committed, or null; nil for a session fed by HTTP writes.
    func status(of id: String) throws(APIError) -> [UInt8]?

    /// Has `tell` told, on every replica, of each session whose source's result could not be
    /// committed, or could again: the session's id and its `status` then, a `source` event's
    /// data for its subscribers. Set once, before the service serves.
    func tellProblems(_ tell: @escaping @Sendable (_ id: String, _ status: [UInt8]) -> Void)

    /// Whether the sources' database can be reached (`GET /ready`).
    var isReady: Bool { get }

    /// Ends the sources' threads (once the HTTP server has stopped).
    func stop()
}

/// A source's rows, read for a session to be created with.
package struct SourceRows: Sendable {
    package let source: String
    package let collection: JSONCollection
    package let options: DiffOptions
    /// What the sources keep to evaluate it again; the service does not look inside.
    package let binding: any Sendable

    package init(source: String, collection: JSONCollection, options: DiffOptions, binding: any Sendable) {
        self.source = source
        self.collection = collection
        self.options = options
        self.binding = binding
    }
}
