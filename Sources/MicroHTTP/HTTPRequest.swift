/// A request with its whole body.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query string, percent-decoded by libmicrohttpd.
    public var path: String
    /// Header names as sent; look them up with `header(_:)`, which ignores case.
    public var headers: [(name: String, value: String)]
    public var body: ByteBuffer

    public init(method: String, path: String, headers: [(name: String, value: String)] = [], body: ByteBuffer) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    public init(method: String, path: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.init(method: method, path: path, headers: headers, body: ByteBuffer(body))
    }

    /// The first value of a header, by case-insensitive name (ASCII, as header names are).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }
}
