import CMicroHTTPD

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// A response body written while it is being sent (server-sent events, a long answer): any
/// thread writes to it, libmicrohttpd's event-loop thread sends what has been written, and the
/// connection is suspended while there is nothing to send, so an idle stream costs no thread
/// and no polling. A client that closes an idle stream is noticed at once (`HangupWatcher`).
///
/// Writes are queued as `StreamBytes`, shared with every other stream they go to, not copied.
/// Bounded: a stream is dropped (its connection closes) when a write finds it more than
/// `maxBuffered` bytes behind, not counting one write larger than `maxBuffered` that it is
/// still sending (a large session's whole state goes out as the client reads it); and every
/// write counts against `budget`, shared by all the writer's streams, which drops the stream
/// whose write does not fit. So a slow reader never delays the writer or anyone else.
package final class HTTPStream: Sendable {
    package let maxBuffered: Int
    package let budget: UnsentBudget?

    /// Where the stream is in its life.
    private enum Phase {
        /// Made, not yet handed to a connection.
        case waiting
        /// Sending on a connection; `suspended` while it has nothing to send.
        case attached(connection: OpaquePointer, suspended: Bool)
        /// The connection is gone (closed by the client, a timeout, or the end of the stream).
        case detached
    }

    /// Why a stream was dropped before its writer closed it.
    package enum Drop: Sendable, Equatable {
        /// The client fell more than `maxBuffered` bytes behind.
        case slowReader
        /// The bytes held for all streams would have passed `budget`.
        case budget
        /// The client closed the connection.
        case hangup
    }

    private struct State {
        var phase = Phase.waiting
        /// What is written and not yet sent: `queue[head...]`, the first from `offset` on.
        var queue: [StreamBytes] = []
        var head = 0
        var offset = 0
        var buffered = 0
        /// The bytes left of the one write larger than `maxBuffered` the stream may hold.
        var oversized: ObjectIdentifier?
        var oversizedLeft = 0
        /// No more writes: the stream ends once the queue is sent (`abort`: at once).
        var closed = false
        var aborted = false
        var dropped: Drop?
        /// Bytes handed to the connection so far.
        var sent = 0
        var onClose: [@Sendable () -> Void] = []
        /// The server's own note of the end, beside the writer's.
        var onDetach: (@Sendable () -> Void)?
        /// Shuts the connection's socket, while attached (an aborted stream's connection).
        var shutSocket: (@Sendable () -> Void)?
    }

    private let state: NIOLockedValueBox<StateBox>

    // @unchecked Sendable: `State` holds the connection pointer, which is used only under the
    // lock (see `wake` and `read`).
    private struct StateBox: @unchecked Sendable {  // the pointer is used under the lock only
        var value = State()
    }

    package init(maxBuffered: Int = 1 << 20, budget: UnsentBudget? = nil) {
        self.maxBuffered = maxBuffered
        self.budget = budget
        state = NIOLockedValueBox(StateBox())
    }

    /// Told once, on any thread, when the stream's connection is gone or the stream was never
    /// sent: whoever writes to it should let go of it. Each body given is told.
    package func onClose(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLockedValue { box -> Bool in
            if case .detached = box.value.phase { return true }
            box.value.onClose.append(body)
            return false
        }
        if now { body() }
    }

    /// Adds bytes to send (see `write(_:)` for shared bytes).
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool { write([StreamBytes(bytes)]) }

    /// Queues `chunks`, in order, shared rather than copied. False, writing nothing more, where
    /// the stream is closed or gone, or where a chunk passes a bound: the stream is then dropped
    /// (`dropped` says why).
    @discardableResult
    package func write(_ chunks: [StreamBytes]) -> Bool {
        state.withLockedValue { box in
            for chunk in chunks {
                guard !box.value.closed else { return false }
                if case .detached = box.value.phase { return false }
                let exempt = chunk.count > maxBuffered && box.value.oversizedLeft == 0
                guard exempt || box.value.buffered - box.value.oversizedLeft + chunk.count <= maxBuffered else {
                    drop(&box.value, .slowReader)
                    return false
                }
                guard chunk.hold(in: budget) else {
                    drop(&box.value, .budget)
                    return false
                }
                box.value.queue.append(chunk)
                box.value.buffered += chunk.count
                if exempt {
                    box.value.oversized = ObjectIdentifier(chunk)
                    box.value.oversizedLeft = chunk.count
                }
            }
            Self.wake(&box.value)
            return true
        }
    }

    /// Ends the stream once what was written is sent.
    package func close() {
        state.withLockedValue { box in
            guard !box.value.closed else { return }
            box.value.closed = true
            Self.wake(&box.value)
        }
    }

    /// Ends the stream at once, dropping what was not sent: the client sees the connection cut.
    package func abort() {
        state.withLockedValue { box in
            box.value.closed = true
            box.value.aborted = true
            releaseQueue(&box.value)
            Self.cut(&box.value)
        }
    }

    // A stream never handed to a connection (its request failed after it was made) gives
    // back what it held.
    deinit { state.withLockedValue { releaseQueue(&$0.value) } }

    /// Why the stream was dropped; nil where it was not.
    package var dropped: Drop? { state.withLockedValue { $0.value.dropped } }

    /// Bytes written and not yet sent.
    package var buffered: Int { state.withLockedValue { $0.value.buffered } }

    /// Bytes handed to the connection so far.
    package var sent: Int { state.withLockedValue { $0.value.sent } }

    /// Whether the connection is still there.
    package var isOpen: Bool {
        state.withLockedValue { box in
            if case .detached = box.value.phase { return false }
            return !box.value.closed
        }
    }

    private func drop(_ state: inout State, _ reason: Drop) {
        if state.dropped == nil { state.dropped = reason }
        state.closed = true
        state.aborted = true
        releaseQueue(&state)
        Self.cut(&state)
    }

    /// Has libmicrohttpd end an aborted stream's connection now. A suspended one is resumed,
    /// to be told so by `read`. One that is not is waiting to send bytes it holds already, to
    /// a client that reads none (the slow reader dropped), and would not ask `read` again
    /// until its timeout (a day where there is none): its socket is shut, which the event loop
    /// sees at once and closes. (The server shuts it only where the connection is still open,
    /// so that a socket number closed and reused meanwhile is not touched.)
    private static func cut(_ state: inout State) {
        guard case .attached(_, let suspended) = state.phase else { return }
        if suspended {
            wake(&state)
        } else {
            state.shutSocket?()
        }
    }

    /// Resumes a connection suspended for want of bytes. Under the lock: the daemon suspends
    /// only under it too, so a resume can never come before the suspend it answers, and a
    /// suspended connection cannot close, so the pointer is live. Within `batchingWakes`, the
    /// resume waits for the batch's end: the phase already says "not suspended", so no other
    /// writer resumes it meanwhile, and the connection, still suspended, cannot close.
    private static func wake(_ state: inout State) {
        guard case .attached(let connection, true) = state.phase else { return }
        state.phase = .attached(connection: connection, suspended: false)
        if let batch = WakeBatch.current {
            batch.connections.append(connection)
            if batch.connections.count >= batch.limit { batch.resume() }
        } else {
            MHD_resume_connection(connection)
        }
    }

    /// Runs `body`, which writes to many streams, and resumes the connections its writes woke
    /// at its end, or each time `limit` of them have gathered. libmicrohttpd's event loop walks
    /// every suspended connection it holds each time it is woken to resume some: woken by each
    /// of thousands of writes in turn (an insert at the top of a session that 10,000 windows
    /// follow), it walked its 5,000 connections again and again, an eighth of the server's CPU
    /// in that fan-out. Woken once a batch, it walks them once a batch; a limit lets the first
    /// connections go before a long pass ends.
    package static func batchingWakes<Result>(limit: Int = .max, _ body: () throws -> Result) rethrows -> Result {
        let batch = WakeBatch(limit: limit)
        defer { batch.resume() }
        return try WakeBatch.$current.withValue(batch, operation: body)
    }

    /// Lets go of everything queued, giving it back to the budget.
    private func releaseQueue(_ state: inout State) {
        for chunk in state.queue[state.head...] { chunk.release(from: budget) }
        state.queue = []
        state.head = 0
        state.offset = 0
        state.buffered = 0
        state.oversized = nil
        state.oversizedLeft = 0
    }

    // MARK: - For the server

    /// The connection now sends this stream.
    func attach(_ connection: OpaquePointer, shutSocket: @escaping @Sendable () -> Void, onDetach: @escaping @Sendable () -> Void) {
        state.withLockedValue {
            $0.value.phase = .attached(connection: connection, suspended: false)
            $0.value.onDetach = onDetach
            $0.value.shutSocket = shutSocket
        }
    }

    /// The client closed the connection (seen while libmicrohttpd was not watching it): the
    /// stream ends at once, and libmicrohttpd closes its side.
    func hangUp() {
        state.withLockedValue { box in
            guard !box.value.aborted else { return }
            drop(&box.value, .hangup)
        }
    }

    /// libmicrohttpd asks for the next bytes (on the connection's event-loop thread): copies
    /// what it can into `buffer`; where there is nothing, suspends the connection until a
    /// write or close wakes it.
    func read(into buffer: UnsafeMutableRawPointer, max: Int) -> Int {
        state.withLockedValue { box -> Int in
            if box.value.aborted { return endWithError }
            if box.value.buffered > 0 { return copy(&box.value, into: buffer, max: max) }
            if box.value.closed { return endOfStream }
            guard case .attached(let connection, _) = box.value.phase else {
                return endWithError
            }
            box.value.phase = .attached(connection: connection, suspended: true)
            MHD_suspend_connection(connection)
            return 0
        }
    }

    /// Copies up to `max` queued bytes, letting go of each chunk once it is sent.
    private func copy(_ state: inout State, into buffer: UnsafeMutableRawPointer, max: Int) -> Int {
        var copied = 0
        while copied < max && state.head < state.queue.count {
            let chunk = state.queue[state.head]
            let count = min(chunk.count - state.offset, max - copied)
            chunk.bytes.withUnsafeBytes { raw in
                (buffer + copied).copyMemory(from: raw.baseAddress! + state.offset, byteCount: count)
            }
            copied += count
            state.offset += count
            if state.oversized == ObjectIdentifier(chunk) { state.oversizedLeft -= count }
            guard state.offset == chunk.count else { break }
            chunk.release(from: budget)
            if state.oversized == ObjectIdentifier(chunk) { state.oversized = nil }
            state.head += 1
            state.offset = 0
        }
        state.buffered -= copied
        state.sent += copied
        if state.head == state.queue.count {
            // Let go: an idle stream holds no buffer.
            state.queue = []
            state.head = 0
        } else if state.head >= 64 && state.head * 2 >= state.queue.count {
            state.queue.removeFirst(state.head)
            state.head = 0
        }
        return copied
    }

    /// What a content reader returns at the end (MHD_CONTENT_READER_END_OF_STREAM, a macro
    /// with a cast, which Swift does not import) and to cut the connection (…_END_WITH_ERROR).
    private var endOfStream: Int { -1 }
    private var endWithError: Int { -2 }

    /// libmicrohttpd is done with the response: the connection is closed or closing.
    func detach() {
        let (onClose, onDetach) = state.withLockedValue { box in
            box.value.phase = .detached
            box.value.shutSocket = nil
            box.value.closed = true
            releaseQueue(&box.value)
            defer { box.value.onClose = [] }
            return (box.value.onClose, box.value.onDetach.take())
        }
        onDetach?()
        for body in onClose { body() }
    }
}

/// The connections writes woke within one `HTTPStream.batchingWakes`, to resume at its end.
// @unchecked Sendable: a batch is made, filled and emptied by the one thread running
// `batchingWakes`, whose task-local value it is; no other thread reaches it.
final class WakeBatch: @unchecked Sendable {  // one thread's only; see above
    @TaskLocal static var current: WakeBatch?
    var connections: [OpaquePointer] = []
    let limit: Int

    init(limit: Int) { self.limit = max(1, limit) }

    /// Resumes the connections gathered so far. Safe under another stream's lock, as a wake
    /// without a batch is: each of them was marked not suspended when it was gathered, so no
    /// one else resumes it, and a suspended connection cannot close.
    func resume() {
        for connection in connections { MHD_resume_connection(connection) }
        connections.removeAll(keepingCapacity: true)
    }
}
