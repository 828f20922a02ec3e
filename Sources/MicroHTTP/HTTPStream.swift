import CMicroHTTPD

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// A response body written while it is being sent (server-sent events, a long answer): any
/// thread writes to it, libmicrohttpd's event-loop thread sends what has been written, and the
/// connection is suspended while there is nothing to send, so an idle stream costs no thread
/// and no polling.
///
/// Bounded: bytes written and not yet sent are held up to `maxBuffered`; a write past it
/// drops the stream (the connection closes) rather than hold more for a client that does not
/// read, so a slow reader never delays the writer or anyone else.
package final class HTTPStream: Sendable {
    package let maxBuffered: Int

    /// Where the stream is in its life.
    private enum Phase {
        /// Made, not yet handed to a connection.
        case waiting
        /// Sending on a connection; `suspended` while it has nothing to send.
        case attached(connection: OpaquePointer, suspended: Bool)
        /// The connection is gone (closed by the client, a timeout, or the end of the stream).
        case detached
    }

    private struct State {
        var phase = Phase.waiting
        var pending: [UInt8] = []
        /// Bytes of `pending` already sent.
        var sent = 0
        /// No more writes: the stream ends once `pending` is sent (`abort`: at once).
        var closed = false
        var aborted = false
        var onClose: (@Sendable () -> Void)?
        /// The server's own note of the end, beside the writer's.
        var onDetach: (@Sendable () -> Void)?

        var buffered: Int { pending.count - sent }
    }

    // @unchecked Sendable inside: `State` holds the connection pointer, which only the lock's
    // holder uses; see `Phase`.
    private let state: NIOLockedValueBox<StateBox>

    private struct StateBox: @unchecked Sendable {  // the pointer is used under the lock only
        var value = State()
    }

    package init(maxBuffered: Int = 1 << 20) {
        self.maxBuffered = maxBuffered
        state = NIOLockedValueBox(StateBox())
    }

    /// Told once, on any thread, when the stream's connection is gone or the stream was never
    /// sent: whoever writes to it should let go of it.
    package func onClose(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLockedValue { box -> Bool in
            if case .detached = box.value.phase { return true }
            box.value.onClose = body
            return false
        }
        if now { body() }
    }

    /// Adds bytes to send. False, writing nothing, where the stream is closed or gone; where
    /// the bytes would pass `maxBuffered`, the stream is dropped and false returned.
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool {
        state.withLockedValue { box in
            guard !box.value.closed else { return false }
            if case .detached = box.value.phase { return false }
            guard box.value.buffered + bytes.count <= maxBuffered else {
                box.value.closed = true
                box.value.aborted = true
                Self.wake(&box.value)
                return false
            }
            if box.value.buffered == 0 {
                // Shares the writer's bytes (one event to many streams) rather than copying.
                box.value.pending = bytes
                box.value.sent = 0
            } else {
                box.value.pending.append(contentsOf: bytes)
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
            Self.wake(&box.value)
        }
    }

    /// Bytes written and not yet sent.
    package var buffered: Int { state.withLockedValue { $0.value.buffered } }

    /// Whether the connection is still there.
    package var isOpen: Bool {
        state.withLockedValue { box in
            if case .detached = box.value.phase { return false }
            return !box.value.closed
        }
    }

    /// Resumes a connection suspended for want of bytes. Under the lock: the daemon suspends
    /// only under it too, so a resume can never come before the suspend it answers, and a
    /// suspended connection cannot close, so the pointer is live.
    private static func wake(_ state: inout State) {
        guard case .attached(let connection, true) = state.phase else { return }
        state.phase = .attached(connection: connection, suspended: false)
        MHD_resume_connection(connection)
    }

    // MARK: - For the server

    /// The connection now sends this stream.
    func attach(_ connection: OpaquePointer, onDetach: @escaping @Sendable () -> Void) {
        state.withLockedValue {
            $0.value.phase = .attached(connection: connection, suspended: false)
            $0.value.onDetach = onDetach
        }
    }

    /// libmicrohttpd asks for the next bytes (on the connection's event-loop thread): copies
    /// what it can into `buffer`; where there is nothing, suspends the connection until a
    /// write or close wakes it.
    func read(into buffer: UnsafeMutableRawPointer, max: Int) -> Int {
        state.withLockedValue { box -> Int in
            if box.value.aborted { return endWithError }
            let available = box.value.buffered
            if available > 0 {
                let count = min(available, max)
                box.value.pending.withUnsafeBytes { raw in
                    buffer.copyMemory(from: raw.baseAddress! + box.value.sent, byteCount: count)
                }
                box.value.sent += count
                if box.value.sent == box.value.pending.count {
                    // Let go: an idle stream holds no buffer.
                    box.value.pending = []
                    box.value.sent = 0
                }
                return count
            }
            if box.value.closed { return endOfStream }
            guard case .attached(let connection, _) = box.value.phase else {
                return endWithError
            }
            box.value.phase = .attached(connection: connection, suspended: true)
            MHD_suspend_connection(connection)
            return 0
        }
    }

    /// What a content reader returns at the end (MHD_CONTENT_READER_END_OF_STREAM, a macro
    /// with a cast, which Swift does not import) and to cut the connection (…_END_WITH_ERROR).
    private var endOfStream: Int { -1 }
    private var endWithError: Int { -2 }

    /// libmicrohttpd is done with the response: the connection is closed or closing.
    func detach() {
        let (onClose, onDetach) = state.withLockedValue { box in
            box.value.phase = .detached
            box.value.closed = true
            box.value.pending = []
            box.value.sent = 0
            return (box.value.onClose.take(), box.value.onDetach.take())
        }
        onDetach?()
        onClose?()
    }
}
