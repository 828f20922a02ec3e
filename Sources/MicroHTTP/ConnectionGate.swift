import CMicroHTTPD
import Synchronization

import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Who is connected: every open connection by socket, and how many each client address holds.
/// The acceptor admits connections through it (or refuses them), libmicrohttpd's close notice
/// releases them, and `sweep` closes those too slow to send their request.
///
/// The server counts connections itself, below libmicrohttpd's own limit, so that
/// libmicrohttpd never has to refuse one: refusing a connection added from another thread
/// deadlocks the daemon in libmicrohttpd 0.9.75 (seen: every connection refused, for good).
final class ConnectionGate: Sendable {
    struct Limits: Sendable {
        var connections: Int
        var connectionsPerClient: Int
        /// Connections sending a streamed response, counted apart from the others (a client's
        /// streams still count against `connectionsPerClient`).
        var streams: Int = 0
        /// Streams one client address may start a second, on average (0: no limit), with room
        /// for `streamOpenBurst` at once: a client opening and closing streams in a loop is
        /// slowed to this rate, whatever else bounds it.
        var streamOpensPerSecond: Int = 0
        var streamOpenBurst: Int = 0
        /// Time for a request head, from accept or from the previous response.
        var headerTimeout: Duration
        /// After the first `headerTimeout` of a body, it must arrive at this many bytes a second.
        var minBodyRate: Int
    }

    enum Admission {
        case admitted
        case serverFull
        case clientFull
    }

    /// Whether a connection may go on to send a stream.
    enum StreamAdmission: Equatable {
        case started
        /// All `limits.streams` are being sent.
        case full
        /// The client has started streams faster than `limits.streamOpensPerSecond`.
        case tooFast
    }

    /// What `sweep` did to a connection.
    enum Expiry {
        /// A request head or body too slow: answered 408, then closed.
        case slowRequest
        /// A kept-alive connection idle too long: closed without an answer.
        case idle
    }

    let limits: Limits
    private struct State {
        var connections: [Int32: ConnectionState] = [:]
        /// Connections in `connections` that send streams: they count against `limits.streams`,
        /// not against `limits.connections` (but against their client's, in `perClient`).
        var streams = 0
        var perClient: [ClientAddress: Int] = [:]
        /// Each client's allowance of stream starts (a token bucket), where it has spent some.
        var streamOpens: [ClientAddress: (tokens: Double, at: Int64)] = [:]

        var requestConnections: Int { connections.count - streams }
    }
    private let state = NIOLockedValueBox(State())

    init(limits: Limits) {
        self.limits = limits
    }

    /// Connections open, streams included.
    var count: Int { state.withLockedValue { $0.connections.count } }

    /// Connections sending streams.
    var streamCount: Int { state.withLockedValue { $0.streams } }

    /// The connection goes on to send a stream: it leaves the connection count for the stream
    /// count, where that is below its limit and the client has not started streams too fast
    /// (changing nothing where it may not). It still counts against its client's connections.
    func startStream(_ connection: ConnectionState, now: Int64 = monotonicNanoseconds()) -> StreamAdmission {
        state.withLockedValue { state in
            guard state.connections[connection.socket] === connection, !connection.streaming else { return .full }
            guard state.streams < limits.streams else { return .full }
            guard spendStreamOpen(connection.client, now: now, in: &state) else { return .tooFast }
            state.streams += 1
            connection.streaming = true
            return .started
        }
    }

    /// Takes one stream start from the client's bucket, refilled at `streamOpensPerSecond`.
    private func spendStreamOpen(_ client: ClientAddress, now: Int64, in state: inout State) -> Bool {
        guard limits.streamOpensPerSecond > 0 else { return true }
        let burst = Double(max(1, limits.streamOpenBurst))
        let rate = Double(limits.streamOpensPerSecond)
        var bucket = state.streamOpens[client] ?? (burst, now)
        bucket.tokens = min(burst, bucket.tokens + Double(max(0, now - bucket.at)) * rate / 1e9)
        bucket.at = now
        guard bucket.tokens >= 1 else {
            state.streamOpens[client] = bucket
            return false
        }
        bucket.tokens -= 1
        state.streamOpens[client] = bucket
        // Buckets that have filled up again are the same as none: drop them now and then, so
        // that the table holds only clients that opened streams lately.
        if state.streamOpens.count > 4_096 {
            state.streamOpens = state.streamOpens.filter { _, bucket in
                bucket.tokens + Double(max(0, now - bucket.at)) * rate / 1e9 < burst
            }
        }
        return true
    }

    /// Counts a new connection unless it would pass a limit.
    func admit(socket: Int32, client: ClientAddress) -> Admission {
        state.withLockedValue { state in
            // A socket number still listed belongs to a connection libmicrohttpd dropped
            // without a notice (it failed to set it up): the number has been closed and reused.
            if let stale = state.connections[socket] { Self.remove(stale, from: &state) }
            guard state.requestConnections < limits.connections else { return .serverFull }
            guard state.perClient[client, default: 0] < limits.connectionsPerClient else { return .clientFull }
            state.connections[socket] = ConnectionState(socket: socket, client: client)
            state.perClient[client, default: 0] += 1
            return .admitted
        }
    }

    /// The connection admitted on `socket`, when libmicrohttpd starts serving it.
    func connection(on socket: Int32) -> ConnectionState? {
        state.withLockedValue { $0.connections[socket] }
    }

    /// The connection's stream has ended and it may carry requests again: it counts as a
    /// connection once more (even past the limit for a moment, as it was admitted already).
    func finishStream(_ connection: ConnectionState) {
        state.withLockedValue { state in
            guard state.connections[connection.socket] === connection, connection.streaming else { return }
            state.streams -= 1
            connection.streaming = false
        }
    }

    /// Shuts a connection's socket down, which makes libmicrohttpd close it, where it is still
    /// open: under the lock, so that its socket number cannot be closed and reused meanwhile.
    func shutDown(_ connection: ConnectionState) {
        state.withLockedValue { state in
            guard state.connections[connection.socket] === connection else { return }
            _ = Glibc.shutdown(connection.socket, Int32(SHUT_RDWR))
        }
    }

    /// A connection has closed (its socket is closed right after).
    func release(_ connection: ConnectionState) {
        state.withLockedValue { state in
            guard state.connections[connection.socket] === connection else { return }
            Self.remove(connection, from: &state)
        }
    }

    /// A connection that libmicrohttpd refused at once (it has closed the socket).
    func release(socket: Int32) {
        state.withLockedValue { state in
            if let connection = state.connections[socket] { Self.remove(connection, from: &state) }
        }
    }

    private static func remove(_ connection: ConnectionState, from state: inout State) {
        state.connections[connection.socket] = nil
        if connection.streaming { state.streams -= 1 }
        uncount(connection.client, from: &state)
    }

    private static func uncount(_ client: ClientAddress, from state: inout State) {
        let left = state.perClient[client, default: 1] - 1
        state.perClient[client] = left > 0 ? left : nil
    }

    /// Closes the connections that are past their deadline: it marks each timed out (the
    /// worker thread then drops it rather than read on), answers a request cut short with
    /// `timeoutResponse`, and shuts the socket down, which makes libmicrohttpd close it. The
    /// lock is held throughout, so a socket number cannot be closed and reused meanwhile.
    func sweep(now: Int64, timeoutResponse: [UInt8]) -> [Expiry] {
        let headerLimit = Int64(limits.headerTimeout.nanoseconds)
        return state.withLockedValue { state in
            var expired = [Expiry]()
            for connection in state.connections.values {
                guard let expiry = connection.expiry(now: now, headerTimeout: headerLimit, minBodyRate: limits.minBodyRate) else { continue }
                if expiry == .slowRequest { sendWithoutWaiting(connection.socket, timeoutResponse) }
                _ = Glibc.shutdown(connection.socket, Int32(SHUT_RDWR))
                expired.append(expiry)
            }
            return expired
        }
    }
}

/// Where a request is on its connection, as the deadlines see it.
enum RequestPhase: UInt8 {
    /// Waiting for a request head (the first, or the next on a kept-alive connection).
    case head
    /// Receiving the body.
    case body
    /// Being handled or answered: no client deadline applies (libmicrohttpd's idle timeout
    /// still closes a connection whose client stops reading).
    case handling
    /// Past a deadline: the connection is being closed.
    case timedOut
}

/// One connection's progress: written by its worker thread, read by the sweep.
final class ConnectionState: Sendable {
    let socket: Int32
    let client: ClientAddress
    private let phase = Atomic<UInt8>(RequestPhase.head.rawValue)
    /// When the phase began (monotonic nanoseconds).
    private let since = Atomic<Int64>(monotonicNanoseconds())
    private let bodyBytes = Atomic<Int>(0)
    /// Requests answered on this connection so far.
    private let answered = Atomic<Int>(0)
    /// The connection sends a stream (it is counted apart). Read and written under the gate's lock.
    // nonisolated(unsafe): only `ConnectionGate` touches it, always holding its lock.
    nonisolated(unsafe) var streaming = false

    init(socket: Int32, client: ClientAddress) {
        self.socket = socket
        self.client = client
    }

    /// Moves from `from` to `to`; false where the sweep has timed the connection out first.
    func advance(from: RequestPhase, to: RequestPhase) -> Bool {
        guard phase.compareExchange(expected: from.rawValue, desired: to.rawValue, ordering: .acquiringAndReleasing).exchanged else {
            return false
        }
        since.store(monotonicNanoseconds(), ordering: .relaxed)
        if to == .body { bodyBytes.store(0, ordering: .relaxed) }
        return true
    }

    func received(_ bytes: Int) { bodyBytes.add(bytes, ordering: .relaxed) }

    var timedOut: Bool { phase.load(ordering: .acquiring) == RequestPhase.timedOut.rawValue }

    /// A request is over: the connection waits for the next head.
    func finishedRequest() {
        answered.add(1, ordering: .relaxed)
        since.store(monotonicNanoseconds(), ordering: .relaxed)
        phase.store(RequestPhase.head.rawValue, ordering: .releasing)
    }

    /// Marks the connection timed out if it is past a deadline now.
    func expiry(now: Int64, headerTimeout: Int64, minBodyRate: Int) -> ConnectionGate.Expiry? {
        let current = phase.load(ordering: .acquiring)
        let elapsed = now - since.load(ordering: .relaxed)
        let late: Bool
        switch RequestPhase(rawValue: current) {
        case .head: late = elapsed > headerTimeout
        case .body:
            let ratedTime = elapsed - headerTimeout
            late = ratedTime > 0 && Int64(bodyBytes.load(ordering: .relaxed)) < Int64(minBodyRate) * ratedTime / 1_000_000_000
        default: late = false
        }
        guard late, phase.compareExchange(expected: current, desired: RequestPhase.timedOut.rawValue, ordering: .acquiringAndReleasing).exchanged
        else { return nil }
        // An idle kept-alive connection has no request to answer: an answer now would be read
        // as the answer to the client's next request.
        return current == RequestPhase.head.rawValue && answered.load(ordering: .relaxed) > 0 ? .idle : .slowRequest
    }
}

/// A client's address, IPv4 or IPv6, as a key.
struct ClientAddress: Hashable, Sendable {
    var high: UInt64
    var low: UInt64
    var isV6 = false

    init(_ address: sockaddr_storage) {
        isV6 = Int32(address.ss_family) == AF_INET6
        var copy = address
        (high, low) = withUnsafeBytes(of: &copy) { raw in
            switch Int32(address.ss_family) {
            case AF_INET:
                // sin_addr: 4 bytes after the family and port.
                (0, UInt64(raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
            case AF_INET6:
                // sin6_addr: 16 bytes after the family, port and flow info.
                (raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
            default: (0, 0)
            }
        }
    }
}

extension ClientAddress {
    /// As `inet_ntop` writes it (`127.0.0.1`, `::1`).
    var text: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var bytes = (high, low)
        let written = withUnsafeBytes(of: &bytes) { raw in
            // Each half holds the address's bytes as they were loaded: in network order.
            isV6
                ? inet_ntop(AF_INET6, raw.baseAddress, &buffer, socklen_t(buffer.count))
                : inet_ntop(AF_INET, raw.baseAddress! + 8, &buffer, socklen_t(buffer.count))
        }
        return written == nil ? "" : String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Writes what fits in the socket's buffer now, without waiting and without SIGPIPE.
func sendWithoutWaiting(_ socket: Int32, _ bytes: [UInt8]) {
    let flags = Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)
    _ = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, flags) }
}

func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ attoseconds / 1_000_000_000
    }
}
