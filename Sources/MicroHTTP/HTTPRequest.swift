/// A request with its whole body.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query string, percent-decoded by libmicrohttpd.
    public var path: String
    /// Header fields as sent; look one up with `header(_:)`, which ignores case.
    public var fields: HeaderFields
    public var body: ByteBuffer
    /// The query string's parameters, percent-decoded, in order (a name without `=` has an
    /// empty value).
    public var query: [(name: String, value: String)] = []

    /// Header names and values as sent.
    public var headers: [(name: String, value: String)] { fields.all }

    public init(method: String, path: String, fields: HeaderFields, query: [(name: String, value: String)] = [], body: ByteBuffer) {
        self.method = method
        self.path = path
        self.fields = fields
        self.query = query
        self.body = body
    }

    public init(method: String, path: String, headers: [(name: String, value: String)] = [], body: ByteBuffer) {
        self.init(method: method, path: path, fields: HeaderFields(headers), body: body)
    }

    public init(method: String, path: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.init(method: method, path: path, headers: headers, body: ByteBuffer(body))
    }

    /// The first value of a query parameter, by its exact name.
    public func query(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// The first value of a header, by case-insensitive name (ASCII, as header names are).
    public func header(_ name: String) -> String? { fields.first(name) }

    /// Whether the first value of a header is `value`, ignoring the case of ASCII letters.
    public func header(_ name: String, equalsIgnoringASCIICase value: String) -> Bool {
        fields.first(name, equalsIgnoringASCIICase: value)
    }
}
