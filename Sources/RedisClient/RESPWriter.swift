#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Commands in Redis's protocol (RESP arrays of bulk strings), written to a socket with one
/// gathering `sendmsg` per batch of pieces: the framing and owned arguments are copied into
/// one buffer, borrowed arguments are sent from where they lie. A session's collection (a
/// megabyte) thus goes to the kernel straight from the request's body, not through two
/// freshly allocated copies as hiredis's own formatting would make.
struct RESPWriter {
    private var buffer: [UInt8] = []
    private enum Piece {
        case own(Range<Int>)
        case borrowed(UnsafeRawBufferPointer)
    }
    private var pieces: [Piece] = []
    /// Where the owned bytes not yet in `pieces` start.
    private var pending = 0

    /// - Parameter storage: the buffer of the connection's last writer (its `storage`), taken
    ///   (the caller's is left empty), emptied and written into: the owned bytes of a commit
    ///   that rewrites a hundred parts of a session come to a megabyte, and a buffer grown
    ///   afresh for each such commit copied them as it doubled and had the kernel zero new
    ///   pages every time.
    init(_ commands: [[RedisArgument]], reusing storage: inout [UInt8]) {
        // Swapped, not copied: held by the writer alone, the storage is emptied in place.
        swap(&buffer, &storage)
        buffer.removeAll(keepingCapacity: true)
        buffer.reserveCapacity(Self.ownedBytes(commands))
        for command in commands {
            own("*\(command.count)\r\n")
            for argument in command {
                switch argument {
                case .bytes(let bytes):
                    own("$\(bytes.count)\r\n")
                    buffer += bytes
                    own("\r\n")
                case .borrowed(let parts):
                    own("$\(parts.reduce(0) { $0 + $1.count })\r\n")
                    flush()
                    for part in parts where part.count > 0 { pieces.append(.borrowed(part)) }
                    own("\r\n")
                }
            }
        }
        flush()
    }

    private mutating func own(_ text: String) { buffer += text.utf8 }

    /// The buffer, for the next writer (`init(_:reusing:)`).
    var storage: [UInt8] { buffer }

    /// At most the bytes `init` copies: framing (at most 24 bytes a count or length line) and
    /// owned arguments.
    private static func ownedBytes(_ commands: [[RedisArgument]]) -> Int {
        var total = 0
        for command in commands {
            total += 24
            for argument in command {
                if case .bytes(let bytes) = argument { total += bytes.count }
                total += 24 + 2
            }
        }
        return total
    }

    private mutating func flush() {
        if pending < buffer.count { pieces.append(.own(pending..<buffer.count)) }
        pending = buffer.count
    }

    /// Linux's IOV_MAX (which Swift cannot see: it is a macro).
    private static let maxVectors = 1024

    /// Writes everything, however many calls the socket takes (it may take part of a batch).
    /// The socket's send timeout bounds each call: a timeout is `RedisError.timeout`.
    func write(to socket: Int32) throws(RedisError) {
        // withUnsafeBytes does not carry a typed error through: the error comes out as a value.
        let failure = buffer.withUnsafeBytes { (own: UnsafeRawBufferPointer) -> RedisError? in
            var vectors = pieces.map { piece -> iovec in
                switch piece {
                case .own(let range): iovec(iov_base: UnsafeMutableRawPointer(mutating: own.baseAddress! + range.lowerBound), iov_len: range.count)
                case .borrowed(let part): iovec(iov_base: UnsafeMutableRawPointer(mutating: part.baseAddress!), iov_len: part.count)
                }
            }
            var first = 0
            while first < vectors.count {
                let batch = min(vectors.count - first, Self.maxVectors)
                let sent = vectors.withUnsafeMutableBufferPointer { vectors in
                    var message = msghdr()
                    message.msg_iov = vectors.baseAddress! + first
                    message.msg_iovlen = batch
                    return sendmsg(socket, &message, Int32(MSG_NOSIGNAL))
                }
                if sent < 0 {
                    switch errno {
                    case EINTR: continue
                    case EAGAIN, EWOULDBLOCK: return .timeout
                    default: return .io(String(cString: strerror(errno)))
                    }
                }
                // Skips what went, and moves the start of a piece sent in part.
                var left = sent
                while left > 0, first < vectors.count {
                    if left >= vectors[first].iov_len {
                        left -= vectors[first].iov_len
                        first += 1
                    } else {
                        vectors[first].iov_base += left
                        vectors[first].iov_len -= left
                        left = 0
                    }
                }
            }
            return nil
        }
        if let failure { throw failure }
    }
}
