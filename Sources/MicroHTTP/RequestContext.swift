import CMicroHTTPD

/// One request's state between libmicrohttpd's calls: the body so far and when it started.
///
/// Only the worker thread serving the connection touches it, between the first access call and
/// the completion notice, so it needs no lock.
final class RequestContext {
    var body: ByteBuffer
    var rejected = false

    init(expectedLength: Int) {
        body = ByteBuffer(capacity: expectedLength)
    }
}
