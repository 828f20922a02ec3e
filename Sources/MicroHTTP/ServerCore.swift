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
            guard declared <= configuration.maxBodySize else {
                // Refused before a byte of the body is read; libmicrohttpd closes the connection after.
                context.rejected = true
                context.answered = true
                return queue(configuration.errorResponse(.bodyTooLarge(limit: configuration.maxBodySize)), on: connection)
            }
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
                context.rejected = true
                context.body = ByteBuffer(capacity: 0)
                return .YES
            }
            context.body.append(UnsafeRawBufferPointer(start: upload, count: size))
            return .YES
        }
        if context.rejected {
            if context.answered { return .YES }
            context.answered = true
            return queue(configuration.errorResponse(.bodyTooLarge(limit: configuration.maxBodySize)), on: connection)
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

    /// libmicrohttpd is done with a request, answered or not.
    func completed(_ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let state, let context = state.pointee else { return }
        Unmanaged<RequestContext>.fromOpaque(context).release()
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
