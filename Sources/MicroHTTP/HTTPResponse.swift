/// A complete response.
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]
    /// Where set, the body is this stream's, sent as it is written (chunked), and `body` is
    /// not sent.
    package var stream: HTTPStream?

    package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is written while it is sent.
    package init(status: Int, headers: [(name: String, value: String)] = [], stream: HTTPStream) {
        self.status = status
        self.headers = headers
        self.body = []
        self.stream = stream
    }

    /// The response as HTTP/1.1 bytes that close the connection, for answers the server
    /// writes to a socket itself (a refused connection, a timed-out request).
    func closingBytes() -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}

/// Failures the server answers itself, before any handler runs; the application decides
/// how they look (`HTTPServer.Configuration.errorResponse`).
package enum HTTPServerError: Sendable, Equatable {
    /// The body is larger than `maxBodySize` bytes.
    case bodyTooLarge(limit: Int)
    /// Bodies being received by all connections together would pass `maxBufferedBodyBytes`.
    case busy
    /// The request breaks HTTP/1.1's framing rules (RFC 9112), which the message says.
    case badRequest(String)
    /// The request target is longer than `maxURILength` bytes.
    case uriTooLong(limit: Int)
    /// The request line and headers together are longer than `maxHeaderBytes`.
    case headersTooLarge(limit: Int)
    /// A transfer coding the server does not decode (only `chunked` is).
    case unsupportedTransferCoding(String)
    /// The request head or body did not arrive in time (`headerTimeout`, `minBodyRate`).
    case requestTimeout
    /// All `connectionLimit` connections are open: the new one is answered and closed.
    case tooManyConnections(limit: Int)
    /// This client address holds `connectionsPerClient` connections already.
    case tooManyConnectionsFromClient(limit: Int)
    /// All `maxStreams` streamed responses are being sent.
    case tooManyStreams(limit: Int)
    /// This client address has started streams faster than `streamOpensPerSecond`.
    case tooManyStreamOpens(perSecond: Int)
}
