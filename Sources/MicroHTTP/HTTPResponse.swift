/// A complete response.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Failures the server answers itself, before any handler runs; the application decides
/// how they look (`HTTPServer.Configuration.errorResponse`).
public enum HTTPServerError: Sendable, Equatable {
    /// The body is larger than `maxBodySize` bytes.
    case bodyTooLarge(limit: Int)
    /// Bodies being received by all connections together would pass `maxBufferedBodyBytes`.
    case busy
}
