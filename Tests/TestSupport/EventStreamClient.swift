#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One server-sent event as the WHATWG parsing rules read it.
public struct ServerSentEvent: Sendable, Equatable {
    public var id: String?
    public var event: String
    public var data: String
    /// `retry:` where the event carried one.
    public var retry: Int?
}

/// A blocking `text/event-stream` reader over one connection, for tests: it sends a GET,
/// reads the head, then undoes the chunked transfer coding and parses events as they arrive
/// (comment lines are counted, not returned).
public final class EventStreamClient {
    public let connection: HTTPConnection
    public private(set) var status = 0
    public private(set) var headers: [(name: String, value: String)] = []
    /// The body once the head was read, when the answer was not a stream (an error).
    public private(set) var body: [UInt8] = []
    /// Comment lines seen (heartbeats).
    public private(set) var comments = 0
    /// The reconnection delay the server last gave (`retry:`), in milliseconds.
    public private(set) var retry: Int?
    /// The last event id seen, as a browser keeps it for `Last-Event-ID`.
    public private(set) var lastEventID: String?
    private var chunked: [UInt8] = []
    private var text: [UInt8] = []
    private var ended = false

    /// - Parameter source: the loopback address to connect from (127.0.0.2 is another client).
    public init(port: UInt16, path: String, headers extra: [(String, String)] = [], timeoutSeconds: Int = 30, source: String? = nil) throws {
        connection = try HTTPConnection(port: port, timeoutSeconds: timeoutSeconds, source: source)
        var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        for (name, value) in extra { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try connection.send(raw: Array(head.utf8))
        let (status, headers, rest) = try connection.readHead()
        self.status = status
        self.headers = headers
        chunked = rest
        if header("Transfer-Encoding")?.lowercased() != "chunked" {
            let length = header("Content-Length").flatMap { Int($0) } ?? 0
            while chunked.count < length { chunked += try connection.receive() }
            body = Array(chunked.prefix(length))
            ended = true
        }
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The next event; nil where the stream ended (the server closed it, or its last chunk came).
    public func next() throws -> ServerSentEvent? {
        var event = ServerSentEvent(id: nil, event: "message", data: "")
        var dataLines: [String] = []
        var any = false
        while true {
            guard let line = try nextLine() else { return nil }
            if line.isEmpty {
                // A block without data (a `retry:` alone) is no event (WHATWG: the data buffer is empty).
                guard any, !dataLines.isEmpty else {
                    if let retry = event.retry { self.retry = retry }
                    any = false
                    continue
                }
                event.data = dataLines.joined(separator: "\n")
                if let id = event.id { lastEventID = id }
                return event
            }
            if line.hasPrefix(":") {
                comments += 1
                continue
            }
            any = true
            let field: Substring, value: Substring
            if let colon = line.firstIndex(of: ":") {
                field = line[..<colon]
                let after = line[line.index(after: colon)...]
                value = after.hasPrefix(" ") ? after.dropFirst() : after
            } else {
                (field, value) = (line[...], "")
            }
            switch field {
            case "id": event.id = String(value)
            case "event": event.event = String(value)
            case "data": dataLines.append(String(value))
            case "retry": event.retry = Int(value)
            default: break
            }
        }
    }

    /// Reads until a comment arrives (true), or anything but a comment or a blank line does
    /// (false: an event began, or the stream ended): what an idle stream should send.
    public func nextComment() throws -> Bool {
        while let line = try nextLine() {
            if line.hasPrefix(":") {
                comments += 1
                return true
            }
            if !line.isEmpty { return false }
        }
        return false
    }

    /// Reads until the stream ends; false where it did not end within the connection's timeout.
    public func waitForEnd() -> Bool {
        do {
            while try next() != nil {}
            return true
        } catch {
            return false
        }
    }

    private func nextLine() throws -> String? {
        // Where the search for a line feed left off: a long line (a large session's data) is
        // searched once, not again with every chunk that adds to it.
        var searched = 0
        while true {
            if let newline = text[searched...].firstIndex(of: 10) {
                var line = Array(text[..<newline])
                text.removeFirst(newline + 1)
                if line.last == 13 { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            searched = text.count
            guard try decodeChunk() else { return nil }
        }
    }

    /// Moves one chunk's bytes into `text`; false at the end of the stream.
    private func decodeChunk() throws -> Bool {
        guard !ended else { return false }
        while true {
            if let lineEnd = Self.crlf(in: chunked) {
                let sizeText = String(decoding: chunked[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(sizeText.trimmingCharacters(), radix: 16) else { throw ClientError.malformed("chunk size \(sizeText)") }
                if size == 0 {
                    ended = true
                    return false
                }
                let start = lineEnd + 2
                while chunked.count < start + size + 2 {
                    do { chunked += try connection.receive() } catch ClientError.closed { ended = true; return false }
                }
                text += chunked[start..<(start + size)]
                chunked.removeFirst(start + size + 2)
                return true
            }
            do { chunked += try connection.receive() } catch ClientError.closed { ended = true; return false }
        }
    }

    private static func crlf(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for index in 0..<(bytes.count - 1) where bytes[index] == 13 && bytes[index + 1] == 10 { return index }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String { String(filter { $0 != " " }) }
}

extension HTTPConnection {
    /// Reads a response head; returns it with whatever body bytes came with it.
    public func readHead() throws -> (status: Int, headers: [(name: String, value: String)], rest: [UInt8]) {
        var received: [UInt8] = []
        while true {
            if received.count >= 4 {
                for index in 0...(received.count - 4)
                where received[index] == 13 && received[index + 1] == 10 && received[index + 2] == 13 && received[index + 3] == 10 {
                    let head = String(decoding: received[..<index], as: UTF8.self)
                    var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
                    let parts = lines.removeFirst().split(separator: " ")
                    guard parts.count >= 2, let status = Int(parts[1]) else { throw ClientError.malformed(head) }
                    let headers = lines.compactMap { line -> (name: String, value: String)? in
                        guard let colon = line.firstIndex(of: ":") else { return nil }
                        return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingSpaces)
                    }
                    return (status, headers, Array(received[(index + 4)...]))
                }
            }
            received += try receive()
        }
    }

    /// What the socket has now, waiting for at least one byte.
    public func receive() throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw ClientError.timedOut }
        if n <= 0 { throw ClientError.closed }
        return Array(chunk[..<n])
    }
}
