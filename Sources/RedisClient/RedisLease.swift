/// A pooled connection kept for a sequence of pipelines, so that commands sent without waiting
/// (`send`) are answered, in order, before a later pipeline's (`run`): a large write can then
/// travel while the caller does other work, and what follows it on the connection is sure to
/// run after it. Used by one thread at a time; `release` (or deinit) gives the connection back.
package final class RedisLease {
    private let pool: RedisPool
    private var connection: RedisPool.Connection?
    /// Replies to commands sent and not yet read.
    package private(set) var unread = 0

    init(pool: RedisPool, connection: RedisPool.Connection) {
        self.pool = pool
        self.connection = connection
    }

    deinit { release() }

    /// Sends the commands; their replies come first in the next `run`.
    package func send(_ commands: [[RedisArgument]]) throws(RedisError) {
        guard let connection else { throw .io("the lease was released") }
        do throws(RedisError) {
            try connection.connection.write(commands)
        } catch {
            drop()
            throw error
        }
        unread += commands.count
    }

    /// Sends the commands and reads every reply outstanding: those to earlier `send`s first,
    /// then these commands' own.
    package func run(_ commands: [[RedisArgument]]) throws(RedisError) -> [RedisValue] {
        guard let connection else { throw .io("the lease was released") }
        do throws(RedisError) {
            try connection.connection.write(commands)
            let replies = try connection.connection.read(unread + commands.count)
            unread = 0
            return replies
        } catch {
            drop()
            throw error
        }
    }

    /// Gives the connection back to the pool; one with replies still unread is closed instead,
    /// as it is out of step.
    package func release() {
        guard let held = connection else { return }
        connection = nil
        pool.giveBack(unread == 0 && !held.connection.broken ? held : nil)
    }

    private func drop() {
        guard connection != nil else { return }
        connection = nil
        pool.giveBack(nil)
    }
}
