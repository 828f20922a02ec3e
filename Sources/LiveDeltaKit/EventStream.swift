import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One server-sent event.
public struct ServerSentEvent: Sendable, Equatable {
    /// The event's name (`reset`, `delta`, `end`, ...).
    public var type: String
    /// Its id, the resume token.
    public var id: String?
    /// Its data, a JSON text.
    public var data: String
}

/// Reads `text/event-stream` bytes into events, as the HTML standard parses them: lines end in
/// CR, LF or CRLF (even split across chunks), `data` lines join with LF, comments are skipped.
struct EventStreamParser {
    private var line: [UInt8] = []
    private var afterCR = false
    private var type = ""
    private var id: String?
    private var data: [String] = []

    mutating func push(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCR && byte == 0x0A {
                afterCR = false
                continue
            }
            afterCR = byte == 0x0D
            if byte == 0x0A || byte == 0x0D {
                if let event = take(String(decoding: line, as: UTF8.self)) { events.append(event) }
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
            }
        }
        return events
    }

    private mutating func take(_ line: String) -> ServerSentEvent? {
        if line.isEmpty {
            defer { (type, id, data) = ("", nil, []) }
            return data.isEmpty ? nil : ServerSentEvent(type: type.isEmpty ? "message" : type, id: id, data: data.joined(separator: "\n"))
        }
        if line.hasPrefix(":") { return nil }
        let field: Substring
        var value: Substring
        if let colon = line.firstIndex(of: ":") {
            field = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            (field, value) = (Substring(line), "")
        }
        switch field {
        case "event": type = String(value)
        case "data": data.append(String(value))
        case "id" where !value.contains("\0"): id = String(value)
        default: break
        }
        return nil
    }
}

/// What a streamed answer gives, in order: its head, then its bytes as they arrive.
enum StreamPart: Sendable {
    case head(status: Int, headers: [String: String])
    case bytes(Data)
}

/// One request whose answer is read as it arrives, through URLSession's data delegate (which
/// streams on Apple platforms and on Linux alike, where `bytes(for:)` does not exist).
final class StreamingRequest: NSObject, URLSessionDataDelegate, Sendable {
    let parts: AsyncThrowingStream<StreamPart, any Error>
    private let continuation: AsyncThrowingStream<StreamPart, any Error>.Continuation
    private let task = Locked<URLSessionDataTask?>(nil)

    override init() {
        (parts, continuation) = AsyncThrowingStream.makeStream(of: StreamPart.self)
        super.init()
    }

    /// Starts `request` on a session of its own with `configuration` (the app's session's).
    func start(_ request: URLRequest, configuration: URLSessionConfiguration) {
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        let dataTask = session.dataTask(with: request)
        task.value = dataTask
        continuation.onTermination = { [weak self] _ in self?.cancel() }
        dataTask.resume()
        session.finishTasksAndInvalidate()
    }

    func cancel() { task.value?.cancel() }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        continuation.yield(.head(status: http?.statusCode ?? 0, headers: headers))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield(.bytes(data))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
    }
}
