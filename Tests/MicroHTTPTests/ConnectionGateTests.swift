import Glibc
import Testing

@testable import MicroHTTP

/// The gate's counts and its deadlines, with the clock given: no sockets and no waiting. The
/// sockets are negative numbers, so that the sweep's shutdown touches no real descriptor.
@Suite struct ConnectionGateTests {
    static let second: Int64 = 1_000_000_000

    static func client(_ last: UInt8) -> ClientAddress {
        var address = sockaddr_storage()
        address.ss_family = sa_family_t(AF_INET)
        withUnsafeMutableBytes(of: &address) { raw in
            // sin_addr, after the family and the port: 10.0.0.last.
            raw[4] = 10
            raw[7] = last
        }
        return ClientAddress(address)
    }

    static func gate(connections: Int = 10, perClient: Int = 10, streams: Int = 0) -> ConnectionGate {
        ConnectionGate(
            limits: .init(
                connections: connections, connectionsPerClient: perClient, streams: streams, headerTimeout: .seconds(10), minBodyRate: 1_000))
    }

    @Test func admissionStopsAtTheServerAndClientLimitsAndReleasingMakesRoom() throws {
        let gate = Self.gate(connections: 3, perClient: 2)
        #expect(gate.admit(socket: -1, client: Self.client(1)) == .admitted)
        #expect(gate.admit(socket: -2, client: Self.client(1)) == .admitted)
        #expect(gate.admit(socket: -3, client: Self.client(1)) == .clientFull)
        #expect(gate.admit(socket: -3, client: Self.client(2)) == .admitted)
        #expect(gate.admit(socket: -4, client: Self.client(3)) == .serverFull)
        #expect(gate.count == 3)
        gate.release(try #require(gate.connection(on: -1)))
        #expect(gate.count == 2 && gate.connection(on: -1) == nil)
        #expect(gate.admit(socket: -1, client: Self.client(1)) == .admitted)
        // A socket number admitted again replaces the connection libmicrohttpd never reported.
        #expect(gate.admit(socket: -1, client: Self.client(3)) == .admitted)
        #expect(gate.count == 3)
        #expect(gate.admit(socket: -5, client: Self.client(1)) == .serverFull)
    }

    @Test func aStreamLeavesTheConnectionCountButNotItsClients() throws {
        let gate = Self.gate(connections: 1, perClient: 1, streams: 1)
        #expect(gate.admit(socket: -1, client: Self.client(1)) == .admitted)
        let first = try #require(gate.connection(on: -1))
        #expect(gate.startStream(first) == .started)
        #expect(gate.streamCount == 1)
        // Its place is free for another connection, but not from the same client: a client's
        // streams count against what it may hold, or one could keep any number open.
        #expect(gate.admit(socket: -2, client: Self.client(1)) == .clientFull)
        #expect(gate.admit(socket: -2, client: Self.client(2)) == .admitted)
        #expect(gate.startStream(try #require(gate.connection(on: -2))) == .full)
        gate.finishStream(first)
        #expect(gate.streamCount == 0 && gate.count == 2)
        gate.release(first)
        #expect(gate.admit(socket: -3, client: Self.client(2)) == .serverFull)
        #expect(gate.admit(socket: -3, client: Self.client(1)) == .serverFull)
    }

    @Test func streamStartsAreLimitedPerClientByATokenBucket() throws {
        var limits = ConnectionGate.Limits(
            connections: 100, connectionsPerClient: 100, streams: 100, headerTimeout: .seconds(10), minBodyRate: 0)
        limits.streamOpensPerSecond = 2
        limits.streamOpenBurst = 3
        let gate = ConnectionGate(limits: limits)
        let start = monotonicNanoseconds()
        func open(_ socket: Int32, _ client: UInt8, at offset: Int64) throws -> ConnectionGate.StreamAdmission {
            #expect(gate.admit(socket: socket, client: Self.client(client)) == .admitted)
            let connection = try #require(gate.connection(on: socket))
            let admission = gate.startStream(connection, now: start + offset)
            gate.release(connection)
            return admission
        }
        // A burst of three, then one every half second.
        #expect(try (0..<5).map { try open(-1 - Int32($0), 1, at: 0) } == [.started, .started, .started, .tooFast, .tooFast])
        #expect(try open(-10, 1, at: Self.second / 4) == .tooFast)
        #expect(try open(-11, 1, at: Self.second / 2) == .started)
        // Another client has its own bucket.
        #expect(try open(-12, 2, at: Self.second / 2) == .started)
        // Streams that closed gave their slots back, whatever the bucket said.
        #expect(gate.streamCount == 0)
    }

    @Test func aHeadPastItsTimeoutIsASlowRequestOnceAndAnIdleConnectionIsClosedSilently() {
        let connection = ConnectionState(socket: -1, client: Self.client(1))
        let start = monotonicNanoseconds()
        #expect(connection.expiry(now: start + 9 * Self.second, headerTimeout: 10 * Self.second, minBodyRate: 1_000) == nil)
        #expect(connection.expiry(now: start + 11 * Self.second, headerTimeout: 10 * Self.second, minBodyRate: 1_000) == .slowRequest)
        #expect(connection.timedOut)
        // Timed out once: no second expiry, and the worker can no longer move it on.
        #expect(connection.expiry(now: start + 20 * Self.second, headerTimeout: 10 * Self.second, minBodyRate: 1_000) == nil)
        #expect(!connection.advance(from: .head, to: .body))

        let keptAlive = ConnectionState(socket: -2, client: Self.client(1))
        keptAlive.finishedRequest()
        let answered = monotonicNanoseconds()
        #expect(keptAlive.expiry(now: answered + 11 * Self.second, headerTimeout: 10 * Self.second, minBodyRate: 1_000) == .idle)
    }

    @Test func aBodyMustKeepToTheMinimumRateAfterTheFirstTimeout() {
        let slow = ConnectionState(socket: -1, client: Self.client(1))
        #expect(slow.advance(from: .head, to: .body))
        let start = monotonicNanoseconds()
        slow.received(100)
        // Within the first timeout no rate applies.
        #expect(slow.expiry(now: start + 9 * Self.second, headerTimeout: 10 * Self.second, minBodyRate: 1_000) == nil)
        // 5 s past it, 5,000 bytes were due.
        #expect(slow.expiry(now: start + 15 * Self.second, headerTimeout: 10 * Self.second, minBodyRate: 1_000) == .slowRequest)

        let steady = ConnectionState(socket: -2, client: Self.client(1))
        #expect(steady.advance(from: .head, to: .body))
        let began = monotonicNanoseconds()
        steady.received(6_000)
        #expect(steady.expiry(now: began + 15 * Self.second, headerTimeout: 10 * Self.second, minBodyRate: 1_000) == nil)
    }

    @Test func aRequestBeingHandledHasNoClientDeadline() {
        let connection = ConnectionState(socket: -1, client: Self.client(1))
        #expect(connection.advance(from: .head, to: .body))
        #expect(connection.advance(from: .body, to: .handling))
        #expect(connection.expiry(now: monotonicNanoseconds() + 3_600 * Self.second, headerTimeout: 10 * Self.second, minBodyRate: 1_000) == nil)
    }

    @Test func theSweepExpiresOnlyThoseLateAndReportsHow() throws {
        let gate = Self.gate()
        #expect(gate.admit(socket: -1, client: Self.client(1)) == .admitted)
        #expect(gate.admit(socket: -2, client: Self.client(1)) == .admitted)
        #expect(gate.admit(socket: -3, client: Self.client(2)) == .admitted)
        try #require(gate.connection(on: -2)).finishedRequest()
        #expect(try #require(gate.connection(on: -3)).advance(from: .head, to: .body))
        #expect(try #require(gate.connection(on: -3)).advance(from: .body, to: .handling))
        let expired = gate.sweep(now: monotonicNanoseconds() + 11 * Self.second, timeoutResponse: [])
        #expect(expired.sorted { "\($0)" < "\($1)" } == [.idle, .slowRequest])
        #expect(try #require(gate.connection(on: -1)).timedOut && !(try #require(gate.connection(on: -3)).timedOut))
    }
}
