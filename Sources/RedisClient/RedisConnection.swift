import CHiredis

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One blocking connection to Redis over hiredis. Not thread-safe (a hiredis context is not):
/// the pool lends it to one caller at a time. After any error it is broken and the pool drops it.
final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>
    private(set) var broken = false
    /// The last write's buffer, reused by the next (`RESPWriter.init(_:reusing:)`), where it
    /// is no larger than `keptWriteBytes`: a pool of 16 connections keeps 32 MB at most.
    private var writeBuffer: [UInt8] = []
    private static let keptWriteBytes = 2 << 20

    init(_ configuration: RedisConfiguration) throws(RedisError) {
        guard let context = redisConnectWithTimeout(configuration.host, Int32(configuration.port), timeval(configuration.connectTimeout)) else {
            throw .connect("out of memory")
        }
        guard context.pointee.err == 0 else {
            let reason = Self.reason(context)
            redisFree(context)
            throw .connect(reason)
        }
        self.context = context
        redisSetTimeout(context, timeval(configuration.commandTimeout))
        // From here on a failure throws out of a complete object, whose deinit frees the context.
        if let password = configuration.password {
            if case .error(let message) = try run([["AUTH", .text(password)]])[0] { throw .connect(message) }
        }
        if configuration.database != 0 {
            if case .error(let message) = try run([["SELECT", .text(String(configuration.database))]])[0] {
                throw .connect(message)
            }
        }
    }

    deinit { redisFree(context) }

    /// Sends the commands in one write and reads their replies in order (a pipeline). Commands
    /// are framed and written here (`RESPWriter`); hiredis reads and parses the replies.
    func run(_ commands: [[RedisArgument]]) throws(RedisError) -> [RedisValue] {
        try write(commands)
        return try read(commands.count)
    }

    /// Sends the commands without waiting for their replies, which a later `read` takes.
    func write(_ commands: [[RedisArgument]]) throws(RedisError) {
        guard !broken else { throw .io("the connection failed earlier") }
        do throws(RedisError) {
            let writer = RESPWriter(commands, reusing: &writeBuffer)
            try writer.write(to: context.pointee.fd)
            if writer.storage.capacity <= Self.keptWriteBytes { writeBuffer = writer.storage }
        } catch {
            broken = true
            throw error
        }
    }

    /// The next `count` replies, in the order their commands were sent.
    func read(_ count: Int) throws(RedisError) -> [RedisValue] {
        guard !broken else { throw .io("the connection failed earlier") }
        var replies = [RedisValue]()
        replies.reserveCapacity(count)
        for _ in 0..<count {
            var reply: UnsafeMutableRawPointer?
            guard redisGetReply(context, &reply) == CHIREDIS_OK, let reply else { throw Self.unanswered(fail()) }
            let typed = reply.assumingMemoryBound(to: redisReply.self)
            replies.append(Self.value(typed))
            freeReplyObject(reply)
        }
        return replies
    }

    /// The next reply that arrives without a command (a subscription's message), waiting up to
    /// `milliseconds` for it to start; nil where none came. A wait that ends empty leaves the
    /// connection as it was (unlike a command's timeout, which breaks it).
    func nextPush(waiting milliseconds: Int32) throws(RedisError) -> RedisValue? {
        guard !broken else { throw .io("the connection failed earlier") }
        var reply: UnsafeMutableRawPointer?
        // A reply read along with an earlier one waits in hiredis's buffer.
        guard redisReaderGetReply(context.pointee.reader, &reply) == CHIREDIS_OK else { throw fail() }
        if reply == nil {
            var readable = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&readable, 1, milliseconds)
            if ready == 0 || (ready < 0 && errno == EINTR) { return nil }
            guard redisGetReply(context, &reply) == CHIREDIS_OK else { throw fail() }
        }
        guard let reply else { return nil }
        defer { freeReplyObject(reply) }
        return Self.value(reply.assumingMemoryBound(to: redisReply.self))
    }

    /// Whether Redis has closed this connection while it sat idle (a restart, a `CLIENT KILL`,
    /// an idle `timeout`): an idle connection in step has nothing to read, so anything to read
    /// means the end of the stream, or bytes nobody asked for. Asks the socket without waiting.
    var closedWhileIdle: Bool {
        guard !broken else { return true }
        var byte: UInt8 = 0
        let read = recv(context.pointee.fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if read < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
        return true
    }

    /// A failure while waiting for replies to commands sent whole.
    private static func unanswered(_ error: RedisError) -> RedisError {
        switch error {
        case .timeout: .unanswered("no reply within the command timeout")
        case .io(let reason): .unanswered(reason)
        default: error
        }
    }

    private func fail() -> RedisError {
        broken = true
        let error = context.pointee.err
        // A read or write that timed out reports EAGAIN.
        if error == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK) { return .timeout }
        return .io(Self.reason(context))
    }

    private static func reason(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private static func value(_ reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        let type = reply.pointee.type
        switch type {
        case CHIREDIS_REPLY_STRING:
            return .string(Array(UnsafeRawBufferPointer(start: reply.pointee.str, count: Int(reply.pointee.len))))
        case CHIREDIS_REPLY_INTEGER: return .integer(Int(reply.pointee.integer))
        case CHIREDIS_REPLY_ARRAY:
            let count = Int(reply.pointee.elements)
            return .array((0..<count).map { value(reply.pointee.element[$0]!) })
        case CHIREDIS_REPLY_STATUS, CHIREDIS_REPLY_ERROR:
            let text = String(decoding: UnsafeRawBufferPointer(start: reply.pointee.str, count: Int(reply.pointee.len)), as: UTF8.self)
            return type == CHIREDIS_REPLY_STATUS ? .status(text) : .error(text)
        default: return .null
        }
    }
}

extension timeval {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
