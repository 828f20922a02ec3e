import CMicroHTTPD
import Dispatch
import Synchronization

/// What libmicrohttpd's worker threads call into: it gathers each request's body, runs the
/// handler and queues the response.
final class ServerCore: Sendable {
    let configuration: HTTPServer.Configuration
    let handler: HTTPServer.Handler
    let inFlight = Atomic<Int>(0)
    let stopping = Atomic<Bool>(false)
    /// Requests handed to `handlers` whose connections are suspended until they answer.
    let offloaded = Atomic<Int>(0)
    /// Bytes of bodies counted against `maxBufferedBodyBytes`, until their requests complete.
    let buffered = Atomic<Int>(0)
    /// Where large requests run: a connection belongs to one event-loop thread, which serves
    /// its connections in turn, so two large requests that land on one thread would wait for
    /// each other while another core idles. This queue spreads them over all cores.
    private let handlers = DispatchQueue(label: "microhttp.handlers", qos: .userInitiated, attributes: .concurrent)

    init(configuration: HTTPServer.Configuration, handler: @escaping HTTPServer.Handler) {
        self.configuration = configuration
        self.handler = handler
    }

    /// One call of libmicrohttpd's access handler: first with the headers, then once per body
    /// chunk, then once more with no data when the body is complete.
    func access(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>,
        upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
        state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let existing = state.pointee else {
            inFlight.add(1, ordering: .relaxed)
            let declared = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length")
                .flatMap { Int(String(cString: $0)) } ?? 0
            let context = RequestContext(expectedLength: min(max(declared, 0), configuration.maxBodySize))
            state.pointee = Unmanaged.passRetained(context).toOpaque()
            // Refused before a byte of the body is read; libmicrohttpd closes the connection after.
            if declared > configuration.maxBodySize { return refuse(context, .bodyTooLarge(limit: configuration.maxBodySize), now: connection) }
            if declared > 0 && !reserve(declared, for: context) { return refuse(context, .busy, now: connection) }
            return .YES
        }
        let context = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()
        let size = uploadSize.pointee
        if size > 0 {
            uploadSize.pointee = 0
            if context.rejected {
                // libmicrohttpd cannot answer in the middle of a body: drop it and answer at the
                // end, but close the connection of a client that keeps sending far past the limit.
                context.discarded += size
                return context.discarded > configuration.maxBodySize ? .NO : .YES
            }
            guard context.body.count + size <= configuration.maxBodySize else {
                return refuse(context, .bodyTooLarge(limit: configuration.maxBodySize), now: nil)
            }
            // A body without (or beyond) its declared length is counted as it arrives.
            let needed = context.body.count + size - context.counted
            guard needed <= 0 || reserve(needed, for: context) else { return refuse(context, .busy, now: nil) }
            context.body.append(UnsafeRawBufferPointer(start: upload, count: size))
            return .YES
        }
        if let refusal = context.refusal {
            if context.answered { return .YES }
            context.answered = true
            return queue(configuration.errorResponse(refusal), on: connection)
        }
        if let response = context.pending.take() {
            // Resumed: the handler thread has answered.
            return queue(response, on: connection)
        }
        let request = HTTPRequest(
            method: String(cString: method), path: String(cString: url),
            headers: headers(of: connection), body: context.body)
        context.body = ByteBuffer(capacity: 0)
        guard request.body.count >= configuration.offloadBodySize else { return queue(handler(request), on: connection) }
        offloaded.add(1, ordering: .relaxed)
        MHD_suspend_connection(connection)
        let suspended = SuspendedConnection(pointer: connection)
        let pending = context.pending
        handlers.async { [self] in
            pending.put(handler(request))
            MHD_resume_connection(suspended.pointer)
            offloaded.subtract(1, ordering: .releasing)
        }
        return .YES
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
    private func refuse(_ context: RequestContext, _ refusal: HTTPServerError, now connection: OpaquePointer?) -> MHD_Result {
        context.refusal = refusal
        context.body = ByteBuffer(capacity: 0)
        guard let connection else { return .YES }
        context.answered = true
        return queue(configuration.errorResponse(refusal), on: connection)
    }

    /// libmicrohttpd is done with a request, answered or not.
    func completed(_ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let state, let context = state.pointee else { return }
        let request = Unmanaged<RequestContext>.fromOpaque(context)
        buffered.subtract(request.takeUnretainedValue().counted, ordering: .relaxed)
        request.release()
        state.pointee = nil
        inFlight.subtract(1, ordering: .releasing)
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let mhdResponse = response.body.withUnsafeBytes {
            MHD_create_response_from_buffer($0.count, UnsafeMutableRawPointer(mutating: $0.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return .NO }
        for (name, value) in response.headers { MHD_add_response_header(mhdResponse, name, value) }
        if stopping.load(ordering: .relaxed) { MHD_add_response_header(mhdResponse, "Connection", "close") }
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }

    private func headers(of connection: OpaquePointer) -> [(name: String, value: String)] {
        var headers = [(name: String, value: String)]()
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, { context, _, name, value in
                guard let context, let name else { return .YES }
                context.assumingMemoryBound(to: [(name: String, value: String)].self).pointee
                    .append((String(cString: name), value.map { String(cString: $0) } ?? ""))
                return .YES
            }, pointer)
        }
        return headers
    }
}

/// A suspended connection, resumed from the handler thread.
// @unchecked Sendable: libmicrohttpd allows MHD_resume_connection from any thread, and the
// connection cannot go away while suspended (the daemon is not stopped before every
// offloaded request has resumed its connection).
struct SuspendedConnection: @unchecked Sendable {  // resumed from any thread by design; see above
    let pointer: OpaquePointer
}
