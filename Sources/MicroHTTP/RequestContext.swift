import CMicroHTTPD

/// One request's state between libmicrohttpd's calls: the body so far and when it started.
///
/// Only the worker thread serving the connection touches it, between the first access call and
/// the completion notice, so it needs no lock.
final class RequestContext {
    var body: ByteBuffer
    /// The body is over the limit: the rest is read and dropped.
    var rejected = false
    /// The refusal has been queued already (possible only before the body starts).
    var answered = false
    var discarded = 0

    init(expectedLength: Int) {
        body = ByteBuffer(capacity: expectedLength)
    }
}
