import CMicroHTTPD
import Synchronization

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// What libmicrohttpd's worker threads call into: it gathers each request's body, runs the
/// handler and queues the response.
final class ServerCore: Sendable {
    let configuration: HTTPServer.Configuration
    let handler: HTTPServer.Handler
    let inFlight = Atomic<Int>(0)
    let stopping = Atomic<Bool>(false)
    /// Requests handed to `large` or `waiting` whose connections are suspended until they answer.
    let offloaded = Atomic<Int>(0)
    /// Bytes of bodies counted against `maxBufferedBodyBytes`, until their requests complete.
    let buffered = Atomic<Int>(0)
    /// Where large requests run: a connection belongs to one event-loop thread, which serves
    /// its connections in turn, so two large requests that land on one thread would wait for
    /// each other while another core idles. A thread per core spreads them over all cores.
    private let large: ThreadPool
    /// Where requests that may wait run (`Configuration.mayWait`).
    private let waiting: ThreadPool
    /// Who is connected, and how far each connection's request has come.
    let gate: ConnectionGate
    /// Streams being sent, so that a stop can end those their writers left open.
    let streams = NIOLockedValueBox<[ObjectIdentifier: HTTPStream]>([:])
    /// Ends a stream as soon as its client closes the connection.
    let hangups = HangupWatcher()

    init(configuration: HTTPServer.Configuration, gate: ConnectionGate, handler: @escaping HTTPServer.Handler) {
        self.configuration = configuration
        self.gate = gate
        self.handler = handler
        // Every thread that runs a handler has the event-loop threads' stack.
        let stack = max(1 << 20, configuration.threadStackSize)
        // A connection has one request in flight at most: the queues never hold more jobs
        // than there are connections.
        let connections = configuration.connectionLimit + configuration.maxStreams
        large = ThreadPool(name: "http-large", threads: HTTPServer.processorCount, stackSize: stack, maxQueued: connections)
        waiting = ThreadPool(name: "http-waiting", threads: configuration.waitingThreads, stackSize: stack, maxQueued: connections)
    }

    /// libmicrohttpd starts or ends serving a connection the acceptor admitted: the
    /// connection's progress is kept with it, for the deadlines.
    func connection(_ connection: OpaquePointer, _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>, started: Bool) {
        if started {
            guard let state = gate.connection(on: cmhd_connection_fd(connection)) else { return }
            socketContext.pointee = Unmanaged.passRetained(state).toOpaque()
        } else if let pointer = socketContext.pointee {
            let state = Unmanaged<ConnectionState>.fromOpaque(pointer)
            gate.release(state.takeUnretainedValue())
            state.release()
            socketContext.pointee = nil
        }
    }

    private func progress(of connection: OpaquePointer) -> ConnectionState? {
        cmhd_socket_context(connection).map { Unmanaged<ConnectionState>.fromOpaque($0).takeUnretainedValue() }
    }

    /// One call of libmicrohttpd's access handler: first with the headers, then once per body
    /// chunk, then once more with no data when the body is complete.
    func access(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?,
        upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
        state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let progress = progress(of: connection)
        guard let existing = state.pointee else {
            return begin(connection, url: url, method: method, version: version, progress: progress, state: state)
        }
        let context = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()
        let size = uploadSize.pointee
        if size > 0 {
            uploadSize.pointee = 0
            return receive(UnsafeRawBufferPointer(start: upload, count: size), for: context, progress: progress)
        }
        return complete(context, on: connection, progress: progress)
    }

    /// The head has arrived: checked, and the body's memory let in where it declares a length.
    private func begin(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?,
        progress: ConnectionState?, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        // The sweep may have timed the connection out just before.
        if let progress, !progress.advance(from: .head, to: .body) { return .NO }
        inFlight.add(1, ordering: .relaxed)
        let head = RequestHead(connection, url: url, method: method, version: version)
        let problem = head.problem(maxURILength: configuration.maxURILength, maxHeaderBytes: configuration.maxHeaderBytes)
        let declared = problem == nil ? head.contentLength ?? 0 : 0
        let headOnly = head.method == "HEAD"
        let unchunked = head.version == "HTTP/1.0"
        let context = RequestContext(head: consume head)
        context.headOnly = headOnly
        context.unchunked = unchunked
        state.pointee = Unmanaged.passRetained(context).toOpaque()
        // A head that cannot be framed safely is answered at once, and the connection closed.
        if let problem { return refuse(context, problem, now: connection) }
        if declared > configuration.maxBodySize {
            return refuse(context, .bodyTooLarge(limit: configuration.maxBodySize), declared: declared, on: connection)
        }
        if declared > 0 && !reserve(declared, for: context) { return refuse(context, .busy, declared: declared, on: connection) }
        // Memory for the body only once it is let in.
        if declared > 0 { context.body = ByteBuffer(capacity: declared) }
        return .YES
    }

    /// A chunk of the body: kept, within the limits, or dropped for a request already refused.
    private func receive(_ chunk: UnsafeRawBufferPointer, for context: RequestContext, progress: ConnectionState?) -> MHD_Result {
        let size = chunk.count
        progress?.received(size)
        if progress?.timedOut == true { return .NO }
        if context.rejected {
            // Read and dropped so that a client still sending sees the answer at the end;
            // one that keeps sending far past the limit is cut off.
            context.discarded += size
            return context.discarded > configuration.maxDiscardBytes ? .NO : .YES
        }
        guard context.bodyCount + size <= configuration.maxBodySize else {
            context.discarded = context.bodyCount + size
            return refuse(context, .bodyTooLarge(limit: configuration.maxBodySize), now: nil)
        }
        // A body without (or beyond) its declared length is counted as it arrives.
        let needed = context.bodyCount + size - context.counted
        guard needed <= 0 || reserve(needed, for: context) else {
            context.discarded = context.bodyCount + size
            return refuse(context, .busy, now: nil)
        }
        if context.body == nil { context.body = ByteBuffer(capacity: size) }
        context.body?.append(chunk)
        return .YES
    }

    /// The body is complete (or the handler thread has answered): the request is handled here,
    /// or on a pool where its route may wait or its body is large, and answered.
    private func complete(_ context: RequestContext, on connection: OpaquePointer, progress: ConnectionState?) -> MHD_Result {
        if let response = context.pending?.take() {
            // Resumed: the handler thread has answered.
            return queue(Self.answer(response, headOnly: context.headOnly), on: connection, unchunked: context.unchunked)
        }
        if context.answered { return .YES }
        // From here on no client deadline applies.
        if let progress, !progress.advance(from: .body, to: .handling) { return .NO }
        if let refusal = context.refusal {
            context.answered = true
            return queue(configuration.errorResponse(refusal), on: connection, closing: true)
        }
        guard let head = context.head.take() else { return .NO }
        let request = {
            var request = HTTPRequest(method: head.method, path: head.path, fields: head.headers, query: head.query, body: context.body ?? .empty)
            request.client = progress?.client.text
            return request
        }()
        context.body = nil
        let waits = configuration.mayWait(request)
        guard waits || request.body.count >= configuration.offloadBodySize else {
            return queue(Self.answer(handler(request), headOnly: context.headOnly), on: connection, unchunked: context.unchunked)
        }
        offloaded.add(1, ordering: .relaxed)
        MHD_suspend_connection(connection)
        let suspended = SuspendedConnection(pointer: connection)
        let pending = PendingResponse()
        context.pending = pending
        let job: @Sendable () -> Void = { [self] in
            pending.put(handler(request))
            MHD_resume_connection(suspended.pointer)
            offloaded.subtract(1, ordering: .releasing)
        }
        // A pool that takes no more (stopping) leaves the job to this thread, which the
        // request then holds as it would without the pools.
        if !(waits ? waiting : large).run(job) { job() }
        return .YES
    }

    /// Refuses a request for its body's size or for the budget. A client that waits for
    /// `100 Continue`, or whose body is too large even to throw away, is answered at once;
    /// any other may already be sending, and closing now would reset the connection before
    /// it reads the answer, so the body is read and dropped first.
    private func refuse(_ context: RequestContext, _ refusal: HTTPServerError, declared: Int, on connection: OpaquePointer) -> MHD_Result {
        let now = context.head?.expectsContinue == true || declared > configuration.maxDiscardBytes
        return refuse(context, refusal, now: now ? connection : nil)
    }

    /// Counts `bytes` more of `context`'s body against the budget, if they fit.
    private func reserve(_ bytes: Int, for context: RequestContext) -> Bool {
        let total = buffered.add(bytes, ordering: .relaxed).newValue
        guard total <= configuration.maxBufferedBodyBytes else {
            buffered.subtract(bytes, ordering: .relaxed)
            return false
        }
        context.counted += bytes
        return true
    }

    /// Refuses the request: at once where no body has been read (`now`), else at its end.
    /// Either way the connection is closed after the answer.
    private func refuse(_ context: RequestContext, _ refusal: HTTPServerError, now connection: OpaquePointer?) -> MHD_Result {
        configuration.onRefusal(refusal)
        context.refusal = refusal
        context.body = nil
        guard let connection else { return .YES }
        context.answered = true
        return queue(configuration.errorResponse(refusal), on: connection, closing: true)
    }

    /// Ends the pools' threads (no request runs on them any more).
    func stopPools() {
        large.stop()
        waiting.stop()
    }

    /// libmicrohttpd is done with a request, answered or not.
    func completed(_ connection: OpaquePointer?, _ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, timedOut: Bool = false) {
        if timedOut { configuration.onIdleCut() }
        if let connection, let progress = progress(of: connection) {
            progress.finishedRequest()
            gate.finishStream(progress)
        }
        guard let state, let context = state.pointee else { return }
        let request = Unmanaged<RequestContext>.fromOpaque(context)
        buffered.subtract(request.takeUnretainedValue().counted, ordering: .relaxed)
        request.release()
        state.pointee = nil
        inFlight.subtract(1, ordering: .releasing)
    }

    /// The answer as sent: a `HEAD` request's without its stream (let go, so that its writer
    /// stops), since libmicrohttpd would end the chunked body it does not send with `0` and an
    /// empty line, which the client would read as the start of the next answer.
    private static func answer(_ response: HTTPResponse, headOnly: Bool) -> HTTPResponse {
        guard headOnly, let stream = response.stream else { return response }
        stream.detach()
        return HTTPResponse(status: response.status, headers: response.headers)
    }

    fileprivate func queue(_ response: HTTPResponse, on connection: OpaquePointer, closing: Bool = false, unchunked: Bool = false) -> MHD_Result {
        if let stream = response.stream { return queue(response, streaming: stream, on: connection, unchunked: unchunked) }
        let mhdResponse = response.body.withUnsafeBytes {
            MHD_create_response_from_buffer($0.count, UnsafeMutableRawPointer(mutating: $0.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return .NO }
        // `withCString` lends a short string's bytes from the stack; passing the string itself
        // would copy it into a new array.
        for (name, value) in response.headers {
            name.withCString { name in value.withCString { value in _ = MHD_add_response_header(mhdResponse, name, value) } }
        }
        if closing || stopping.load(ordering: .relaxed) { MHD_add_response_header(mhdResponse, "Connection", "close") }
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }

    /// A streamed response: its connection leaves the request count for the stream count
    /// (where the stream limit allows; else a 503), and libmicrohttpd pulls the stream's bytes
    /// as the socket takes them.
    private func queue(_ response: HTTPResponse, streaming stream: HTTPStream, on connection: OpaquePointer, unchunked: Bool) -> MHD_Result {
        guard let progress = progress(of: connection) else { return refuse(stream, .tooManyStreams(limit: gate.limits.streams), on: connection) }
        switch gate.startStream(progress) {
        case .started: break
        case .full: return refuse(stream, .tooManyStreams(limit: gate.limits.streams), on: connection)
        case .tooFast: return refuse(stream, .tooManyStreamOpens(perSecond: gate.limits.streamOpensPerSecond), on: connection)
        }
        // The response holds the stream until libmicrohttpd frees it (`streamFreed`).
        let context = Unmanaged.passRetained(stream).toOpaque()
        // libmicrohttpd allocates (and zeroes) a buffer of this size with every such response,
        // but fills it only for an unchunked body: a chunked one is written straight into the
        // connection's own memory. At 16 KiB for every stream it was a third of what an idle
        // subscriber held (docs/performance.md, live).
        let block = unchunked ? 16 << 10 : 64
        guard let mhdResponse = MHD_create_response_from_callback(UInt64.max /* MHD_SIZE_UNKNOWN */, block, streamReader, context, streamFreed)
        else {
            Unmanaged<HTTPStream>.fromOpaque(context).release()
            stream.detach()
            return .NO
        }
        for (name, value) in response.headers {
            name.withCString { name in value.withCString { value in _ = MHD_add_response_header(mhdResponse, name, value) } }
        }
        let key = ObjectIdentifier(stream)
        streams.withLockedValue { $0[key] = stream }
        // libmicrohttpd's epoll loop finds a closed connection by walking the connections with
        // the default timeout from the least recently active, stopping at the first one still
        // open: a stream ended while resumed (its client went away) stays unclosed behind any
        // older open connection, its socket and its client's place held. Connections with a
        // timeout of their own are all walked on every pass, so a stream gets one, a second
        // longer than the rest (where the rest have none, a day: none in effect).
        let timeout = configuration.connectionTimeoutSeconds
        _ = cmhd_set_connection_timeout(connection, UInt32(clamping: timeout > 0 ? timeout + 1 : 86_400))
        let watch = hangups.watch(socket: progress.socket, stream: stream)
        stream.attach(
            connection, shutSocket: { [gate] in gate.shutDown(progress) },
            onDetach: { [streams, hangups] in
                hangups.forget(watch)
                _ = streams.withLockedValue { $0.removeValue(forKey: key) }
            })
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }
}

extension ServerCore {
    /// Answers `refusal` in place of a stream, and lets its writer know it will not be sent
    /// (its `onClose` runs).
    fileprivate func refuse(_ stream: HTTPStream, _ refusal: HTTPServerError, on connection: OpaquePointer) -> MHD_Result {
        stream.detach()
        configuration.onRefusal(refusal)
        return queue(configuration.errorResponse(refusal), on: connection)
    }
}

private let streamReader: MHD_ContentReaderCallback = { context, _, buffer, max in
    guard let context, let buffer else { return -2 }
    return Unmanaged<HTTPStream>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.read(into: buffer, max: max) }
}

private let streamFreed: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let stream = Unmanaged<HTTPStream>.fromOpaque(context)
    stream.takeUnretainedValue().detach()
    stream.release()
}

/// A suspended connection, resumed from the handler thread.
// @unchecked Sendable: libmicrohttpd allows MHD_resume_connection from any thread, and the
// connection cannot go away while suspended (the daemon is not stopped before every
// offloaded request has resumed its connection).
struct SuspendedConnection: @unchecked Sendable {  // resumed from any thread by design; see above
    let pointer: OpaquePointer
}
