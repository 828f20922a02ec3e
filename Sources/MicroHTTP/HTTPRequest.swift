/// A request with its whole body.
package struct HTTPRequest: Sendable {
    package var method: String
    /// The path without the query string, as sent (percent-encoded): a router decodes it one
    /// segment at a time (`PercentDecoding`), so that an encoded `/` stays in its segment.
    package var path: String
    /// Header fields as sent; look one up with `header(_:)`, which ignores case.
    package var fields: HeaderFields
    package var body: ByteBuffer
    /// The query string's parameters, percent-decoded, in order (a name without `=` has an
    /// empty value).
    package var query: [(name: String, value: String)] = []
    /// The address the request came from (the connection's peer), as text; nil where it was
    /// not made by the server (a test's request).
    package var client: String?

    /// Header names and values as sent.
    package var headers: [(name: String, value: String)] { fields.all }

    package init(method: String, path: String, fields: HeaderFields, query: [(name: String, value: String)] = [], body: ByteBuffer) {
        self.method = method
        self.path = path
        self.fields = fields
        self.query = query
        self.body = body
    }

    package init(method: String, path: String, headers: [(name: String, value: String)] = [], body: ByteBuffer) {
        self.init(method: method, path: path, fields: HeaderFields(headers), body: body)
    }

    package init(method: String, path: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.init(method: method, path: path, headers: headers, body: ByteBuffer(body))
    }

    /// The first value of a query parameter, by its exact name.
    package func query(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// The first value of a header, by case-insensitive name (ASCII, as header names are).
    package func header(_ name: String) -> String? { fields.first(name) }

    /// Every value of a header, by case-insensitive name, in the order sent.
    package func headerValues(_ name: String) -> [String] { fields.values(name) }

    /// Whether the first value of a header is `value`, ignoring the case of ASCII letters.
    package func header(_ name: String, equalsIgnoringASCIICase value: String) -> Bool {
        fields.first(name, equalsIgnoringASCIICase: value)
    }
}
