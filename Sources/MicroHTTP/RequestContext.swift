import CMicroHTTPD

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// One request's state between libmicrohttpd's calls: the body so far and when it started.
///
/// Only the worker thread serving the connection touches it, between the first access call and
/// the completion notice, so it needs no lock.
final class RequestContext {
    /// The request line and headers, checked; taken when the request is handed on.
    var head: RequestHead?
    /// The body so far: none until its first byte is let in (or its declared length is).
    var body: ByteBuffer?
    var bodyCount: Int { body?.count ?? 0 }
    /// The body is over a limit: the rest is read and dropped, and `refusal` is the answer.
    var refusal: HTTPServerError?
    var rejected: Bool { refusal != nil }
    /// Bytes of this body counted in the server's buffered total.
    var counted = 0
    /// The refusal has been queued already (possible only before the body starts).
    var answered = false
    var discarded = 0
    /// The answer to a request handled on another thread, waiting for the connection to
    /// resume; made only for such a request.
    var pending: PendingResponse?
    /// A `HEAD` request: its answer carries no body, and so no stream.
    var headOnly = false
    /// An HTTP/1.0 request: a stream's body goes unchunked, through the response's own buffer.
    var unchunked = false

    init(head: RequestHead) {
        self.head = head
    }
}

/// A response made on a handler thread for a suspended connection, taken on resumption.
final class PendingResponse: Sendable {
    private let response = NIOLockedValueBox<HTTPResponse?>(nil)

    func put(_ value: HTTPResponse) { response.withLockedValue { $0 = value } }
    func take() -> HTTPResponse? { response.withLockedValue { $0.take() } }
}
