import Dispatch

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// A bounded pool of connections to one Redis. A caller borrows a connection for one
/// pipeline; connections are opened when needed, at most `maxConnections`, and a broken one, or
/// one Redis closed while it was idle, is dropped, so the pool reconnects by itself after Redis
/// comes back.
package final class RedisPool: Sendable {
    package let configuration: RedisConfiguration
    private let idle = NIOLockedValueBox<[Connection]>([])
    /// Counts the connections that may still be opened or lent out.
    private let slots: DispatchSemaphore
    /// Counts the leases that may still be taken: at most half the connections, so that the
    /// holders of leases, who may wait for other things while holding them, never starve
    /// one-pipeline callers, who give their connection back at once.
    private let leases: DispatchSemaphore

    /// A connection as the pool lends it.
    // @unchecked Sendable: a connection is used by one thread at a time (lent out, given back
    // under the pool's lock), never concurrently.
    final class Connection: @unchecked Sendable {  // one borrower at a time; see above
        let connection: RedisConnection
        init(_ connection: RedisConnection) { self.connection = connection }
    }

    package init(_ configuration: RedisConfiguration) {
        self.configuration = configuration
        slots = DispatchSemaphore(value: max(1, configuration.maxConnections))
        leases = DispatchSemaphore(value: configuration.maxConnections / 2)
    }

    /// Runs the commands as one pipeline on a pooled connection and returns their replies.
    package func run(_ commands: [[RedisArgument]]) throws(RedisError) -> [RedisValue] {
        guard slots.wait(timeout: .now() + .nanoseconds(Int(configuration.commandTimeout.nanosecondsClamped))) == .success else {
            throw .timeout
        }
        defer { slots.signal() }
        let lent = try checkOut()
        // A connection that failed is not given back: the next caller opens a fresh one.
        let replies = try lent.connection.run(commands)
        checkIn(lent)
        return replies
    }

    /// A connection of its own for a sequence of pipelines, where one is free now (nil, without
    /// waiting, where none is, or the leases out are at their limit).
    package func lease() -> RedisLease? {
        guard leases.wait(timeout: .now()) == .success else { return nil }
        guard slots.wait(timeout: .now()) == .success else {
            leases.signal()
            return nil
        }
        do throws(RedisError) {
            return RedisLease(pool: self, connection: try checkOut())
        } catch {
            giveBack(nil)
            return nil
        }
    }

    /// A lease's end: its connection goes back where it is still in step (no replies unread).
    func giveBack(_ connection: Connection?) {
        if let connection { checkIn(connection) }
        slots.signal()
        leases.signal()
    }

    /// An idle connection Redis has not closed, else a new one. Without the check, the first
    /// callers after a Redis restart each got the error of a connection that had died idle.
    private func checkOut() throws(RedisError) -> Connection {
        while let pooled = idle.withLockedValue({ $0.popLast() }) {
            if !pooled.connection.closedWhileIdle { return pooled }
        }
        return Connection(try RedisConnection(configuration))
    }

    private func checkIn(_ connection: Connection) {
        idle.withLockedValue { $0.append(connection) }
    }

    /// Closes the idle connections (in use ones close when given back broken, or stay).
    package func closeIdle() {
        idle.withLockedValue { $0.removeAll() }
    }
}

extension Duration {
    var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ attoseconds / 1_000_000_000
    }
}
