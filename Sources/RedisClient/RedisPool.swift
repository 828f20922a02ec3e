import Dispatch
import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// A bounded pool of connections to one Redis. A caller borrows a connection for one
/// pipeline; connections are opened when needed, at most `maxConnections`, and a broken one is
/// dropped, so the pool reconnects by itself after Redis comes back.
public final class RedisPool: Sendable {
    public let configuration: RedisConfiguration
    private let idle = NIOLockedValueBox<[Connection]>([])
    /// Counts the connections that may still be opened or lent out.
    private let slots: DispatchSemaphore

    /// A connection as the pool lends it.
    // @unchecked Sendable: a connection is used by one thread at a time (lent out, given back
    // under the pool's lock), never concurrently.
    private final class Connection: @unchecked Sendable {  // one borrower at a time; see above
        let connection: RedisConnection
        init(_ connection: RedisConnection) { self.connection = connection }
    }

    public init(_ configuration: RedisConfiguration) {
        self.configuration = configuration
        slots = DispatchSemaphore(value: max(1, configuration.maxConnections))
    }

    /// Runs the commands as one pipeline on a pooled connection and returns their replies.
    public func run(_ commands: [[RedisArgument]]) throws(RedisError) -> [RedisValue] {
        guard slots.wait(timeout: .now() + .nanoseconds(Int(configuration.commandTimeout.nanosecondsClamped))) == .success else {
            throw .timeout
        }
        defer { slots.signal() }
        let lent: Connection
        if let pooled = idle.withLockedValue({ $0.popLast() }) { lent = pooled } else { lent = Connection(try RedisConnection(configuration)) }
        // A connection that failed is not given back: the next caller opens a fresh one.
        let replies = try lent.connection.run(commands)
        idle.withLockedValue { $0.append(lent) }
        return replies
    }

    /// One command.
    public func run(_ command: [String]) throws(RedisError) -> RedisValue {
        try run([command.map(RedisArgument.text)])[0]
    }

    /// Closes the idle connections (in use ones close when given back broken, or stay).
    public func closeIdle() {
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
