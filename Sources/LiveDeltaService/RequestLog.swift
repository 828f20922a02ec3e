import Logging
import MicroHTTP

/// One line a request (`request`), and one when a stream it opened ends (`stream ended`):
/// what an operator needs to find a request again and to tell a client's problem from the
/// server's. Each request gets an id: the client's `X-Request-Id` where it sends a sane one,
/// else one made here, and the answer carries it back.
struct RequestLog: Sendable {
    let logger: Logger
    /// Peers whose `X-Forwarded-For` is believed (`--trusted-proxies`): a request through one
    /// is logged with the address the proxy says it came from.
    let trustedProxies: Set<String>

    /// The query parameters worth a log line: how the answer is spelled and what it follows,
    /// never a token (`since` is a position, not a secret, but long and of no use in a log).
    static let loggedParameters: Set<String> = [
        "format", "changes", "rows", "catchUp", "wait", "limit", "offset", "after", "before", "overscan",
    ]

    /// The request's id: the client's where it is 1 to 128 visible ASCII characters, else a
    /// new one (16 hex digits).
    static func id(of request: HTTPRequest) -> String {
        if let given = request.header("X-Request-Id"), (1...128).contains(given.utf8.count), given.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
            return given
        }
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The address the request came from: a trusted proxy's peer is replaced by the last
    /// address of `X-Forwarded-For` that is not itself a trusted proxy.
    func client(of request: HTTPRequest) -> (client: String, peer: String?) {
        guard let peer = request.client else { return ("", nil) }
        guard trustedProxies.contains(peer) else { return (peer, nil) }
        let forwarded = request.headerValues("X-Forwarded-For").flatMap { $0.split(separator: ",") }.map { part in
            String(part.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        }
        guard let origin = forwarded.last(where: { !$0.isEmpty && !trustedProxies.contains($0) }) else { return (peer, nil) }
        return (origin, peer)
    }

    /// The request's line.
    func request(
        _ request: HTTPRequest, id: String, route: String, response: HTTPResponse, code: ErrorCode?, elapsed: Duration
    ) {
        var metadata: Logger.Metadata = [
            "method": "\(request.method)", "path": "\(request.path)", "route": "\(route)", "status": .stringConvertible(response.status),
            "bytes_in": .stringConvertible(request.body.count), "bytes_out": .stringConvertible(response.body.count),
            "duration_ms": .stringConvertible(Self.milliseconds(elapsed)), "request_id": "\(id)",
        ]
        let (client, peer) = client(of: request)
        if !client.isEmpty { metadata["client"] = "\(client)" }
        if let peer { metadata["proxy"] = "\(peer)" }
        if let code { metadata["code"] = "\(code.rawValue)" }
        let query = request.query.filter { Self.loggedParameters.contains($0.name) }.map { "\($0.name)=\($0.value)" }
        if !query.isEmpty { metadata["query"] = "\(query.joined(separator: "&"))" }
        if response.stream != nil { metadata["stream"] = .stringConvertible(true) }
        logger.info("request", metadata: metadata)
    }

    /// Logs the end of the stream `response` carries (an event stream, a long poll): how long
    /// it lived, what it sent, and why it was cut where it was.
    func streamEnds(_ response: HTTPResponse, id: String, route: String) {
        guard let stream = response.stream else { return }
        let opened = ContinuousClock.now
        stream.onClose { [logger] in
            var metadata: Logger.Metadata = [
                "route": "\(route)", "request_id": "\(id)", "duration_ms": .stringConvertible(Self.milliseconds(ContinuousClock.now - opened)),
                "bytes_out": .stringConvertible(stream.sent),
            ]
            if let dropped = stream.dropped {
                metadata["ended_by"] =
                    switch dropped {
                    case .slowReader: "slow_reader"
                    case .budget: "unsent_budget"
                    case .hangup: "client"
                    }
            }
            logger.info("stream ended", metadata: metadata)
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.attoseconds / 1_000_000_000) / 1_000_000 + Double(duration.components.seconds) * 1_000
    }
}
