/// A reply from Redis.
package enum RedisValue: Sendable, Equatable {
    case string([UInt8])
    case integer(Int)
    case array([RedisValue])
    case null
    /// A simple status (`OK`, `QUEUED`).
    case status(String)
    /// An error reply (`ERR …`, `NOSCRIPT …`); a command failed, the connection is fine.
    case error(String)

    package var bytes: [UInt8]? {
        if case .string(let bytes) = self { return bytes }
        return nil
    }

    package var integer: Int? {
        switch self {
        case .integer(let value): value
        case .string(let bytes): Int(String(decoding: bytes, as: UTF8.self))
        default: nil
        }
    }

    package var array: [RedisValue]? {
        if case .array(let values) = self { return values }
        return nil
    }
}

/// Why a command got no reply. After any of these the connection is dropped.
package enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Could not connect, authenticate or select the database.
    case connect(String)
    /// The connection failed, or the reply was not Redis's protocol.
    case io(String)
    /// No reply within the command timeout, or no connection free within it: nothing was
    /// sent, or what was sent was cut short (Redis runs no command it did not read whole).
    case timeout
    /// The commands were sent whole and their replies did not come (in time, or the connection
    /// failed): whether Redis ran them, or will, is not known.
    case unanswered(String)
    /// Redis answered with an error where the caller needed a value.
    case reply(String)

    package var description: String {
        switch self {
        case .connect(let reason): "cannot connect to Redis: \(reason)"
        case .io(let reason): "Redis connection failed: \(reason)"
        case .timeout: "Redis did not answer in time"
        case .unanswered(let reason): "Redis did not answer commands sent to it (\(reason)); whether it ran them is not known"
        case .reply(let message): "Redis answered: \(message)"
        }
    }
}
