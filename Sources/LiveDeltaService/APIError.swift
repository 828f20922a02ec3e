import ByteJSON
import MicroHTTP

/// A refusal: its status, a stable code, a message that says what was wrong, and where
/// (a JSON Pointer into the body, or a byte offset for text that is not JSON).
package struct APIError: Error, Sendable {
    package enum Detail: Sendable {
        case int(Int)
        case string(String)
        case strings([String])
        case null
    }

    package var code: ErrorCode
    package var status: Int { code.status }
    package var message: String
    package var pointer: String?
    package var offset: Int?
    package var details: [(key: String, value: Detail)] = []
    package var headers: [(name: String, value: String)] = []

    package init(_ code: ErrorCode, message: String, pointer: String? = nil, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.pointer = pointer
        self.offset = offset
    }

    package static func malformedJSON(_ error: JSONError) -> APIError {
        // The one limit a JSON error can be: say which flag sets it.
        let flag = if case .tooDeep = error.reason { " (--max-depth, LIVEDELTA_MAX_DEPTH)" } else { "" }
        return APIError(.malformedJSON, message: "the body is not JSON: \(error.description)\(flag)", offset: error.offset)
    }

    package static func bodyTooLarge(limit: Int) -> APIError {
        APIError(
            .bodyTooLarge,
            message:
                "the body is larger than the limit of \(limit) bytes (--max-body-size, LIVEDELTA_MAX_BODY_SIZE); send less at once, or raise the limit"
        )
    }

    /// A failure of the server's own, not the request's: answered 500 and logged (the service
    /// logs every 5xx but 503 at error level), never a trap.
    package static func internalError(_ detail: String) -> APIError {
        APIError(.internalError, message: "the server failed to answer this request (\(detail)); it has been logged")
    }

    /// The HTTP server's own refusals, made before any route runs.
    package static func server(_ error: HTTPServerError) -> APIError {
        var apiError: APIError
        switch error {
        case .bodyTooLarge(let limit): return .bodyTooLarge(limit: limit)
        case .busy:
            apiError = APIError(
                .serverBusy,
                message:
                    "the server is receiving as many request body bytes as it holds at once (--max-buffered-body-bytes, LIVEDELTA_MAX_BUFFERED_BODY_BYTES); try again shortly"
            )
        case .badRequest(let reason): return APIError(.badRequest, message: reason)
        case .uriTooLong(let limit):
            return APIError(.uriTooLong, message: "the request target is longer than the limit of \(limit) bytes")
        case .headersTooLarge(let limit):
            return APIError(
                .headersTooLarge, message: "the request line and headers are longer than the limit of \(limit) bytes")
        case .unsupportedTransferCoding(let coding):
            return APIError(
                .unsupportedTransferCoding,
                message: "the body's Transfer-Encoding is \"\(coding)\"; send it with Content-Length, or as chunked")
        case .requestTimeout:
            return APIError(
                .requestTimeout, message: "the request did not arrive in time (its head, or its body at the minimum rate)")
        case .tooManyConnections(let limit):
            apiError = APIError(
                .tooManyConnections, message: "all \(limit) connections are in use (--max-connections, LIVEDELTA_MAX_CONNECTIONS); try again shortly")
        case .tooManyConnectionsFromClient(let limit):
            apiError = APIError(
                .tooManyConnectionsFromClient,
                message:
                    "this address already has \(limit) connections open, its streams included, the most one client may (--max-connections-per-client, LIVEDELTA_MAX_CONNECTIONS_PER_CLIENT); reuse them, or close some"
            )
        case .tooManyStreams(let limit):
            apiError = APIError(
                .tooManySubscribers,
                message: "all \(limit) event streams the server holds are open (--max-subscribers, LIVEDELTA_MAX_SUBSCRIBERS); try again shortly")
        case .tooManyStreamOpens(let perSecond):
            apiError = APIError(
                .tooManyStreamOpens,
                message:
                    "this address starts event streams and long polls faster than the \(perSecond) a second one client may (--stream-opens-per-second, LIVEDELTA_STREAM_OPENS_PER_SECOND); keep a stream open, or wait between polls"
            )
        }
        apiError.headers = [("Retry-After", "1")]
        return apiError
    }

    package static func invalidShape(_ pointer: JSONPointer, _ message: String) -> APIError {
        APIError(.invalidShape, message: message, pointer: pointer.description)
    }

    /// A member that must appear once appears again (JSON would otherwise let the last win
    /// silently); `pointer` is where.
    package static func duplicateMember(_ pointer: JSONPointer) -> APIError {
        let name = pointer.tokens.last ?? ""
        return APIError(
            .duplicateMember, message: "\"\(name)\" appears more than once at \(pointer); give each member once",
            pointer: pointer.description)
    }

    package static func invalidOption(_ pointer: JSONPointer, _ message: String) -> APIError {
        APIError(.invalidOption, message: message, pointer: pointer.description)
    }

    /// A query parameter that is not one of the values it takes; `parameter` names it.
    package static func invalidParameter(_ name: String, _ message: String) -> APIError {
        var error = APIError(.invalidParameter, message: message)
        error.details = [("parameter", .string(name))]
        return error
    }

    package static func notFound(_ path: String) -> APIError {
        APIError(.notFound, message: "there is nothing at \(path)")
    }

    package static func methodNotAllowed(_ method: String, _ path: String, allowed: [String]) -> APIError {
        var error = APIError(
            .methodNotAllowed,
            message: "\(path) does not take \(method); it takes \(allowed.joined(separator: ", "))")
        error.headers = [("Allow", allowed.joined(separator: ", "))]
        return error
    }

    /// The error as its JSON body.
    package var body: [UInt8] {
        var writer = JSONWriter()
        writer.raw("{\"error\":{")
        writer.key("code")
        writer.string(code.rawValue)
        writer.raw(",")
        writer.key("message")
        writer.string(message)
        if let pointer {
            writer.raw(",")
            writer.key("pointer")
            writer.string(pointer)
        }
        if let offset {
            writer.raw(",")
            writer.key("offset")
            writer.int(offset)
        }
        for (key, value) in details {
            writer.raw(",")
            writer.string(key)
            writer.raw(":")
            switch value {
            case .int(let number): writer.int(number)
            case .string(let text): writer.string(text)
            case .null: writer.raw("null")
            case .strings(let texts):
                writer.raw("[")
                for (index, text) in texts.enumerated() {
                    if index > 0 { writer.raw(",") }
                    writer.string(text)
                }
                writer.raw("]")
            }
        }
        writer.raw("}}")
        return writer.bytes
    }

    package var response: HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }
}

/// An RFC 6901 JSON Pointer, built up as a reader descends.
package struct JSONPointer: Sendable, CustomStringConvertible {
    var tokens: [String] = []

    package init(_ tokens: String...) { self.tokens = tokens }

    package func appending(_ token: String) -> JSONPointer {
        var copy = self
        copy.tokens.append(token)
        return copy
    }

    package func appending(_ index: Int) -> JSONPointer { appending(String(index)) }

    /// Appends a dotted key path (`movie.id`) as separate tokens.
    package func appending(path: [String]) -> JSONPointer { path.reduce(self) { $0.appending($1) } }

    package var description: String {
        tokens.map { "/" + $0.replacingOccurrences("~", "~0").replacingOccurrences("/", "~1") }.joined()
    }
}

extension String {
    /// The text with each `target` scalar replaced. By scalar, not by Character: a `/` followed
    /// by a combining mark (U+0301) is one Character that is not `/`, and a pointer that left
    /// it unescaped would name another member.
    func replacingOccurrences(_ target: Unicode.Scalar, _ replacement: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if scalar == target { result.append(contentsOf: replacement.unicodeScalars) } else { result.append(scalar) }
        }
        return String(result)
    }
}

/// A step of the scanner's, where a fault is the body's JSON: answered as malformed JSON at its
/// place, so that the readers of bodies throw `APIError` alone, and an error of a new type
/// cannot pass through them to become a 500.
func json<T>(_ step: () throws(JSONError) -> T) throws(APIError) -> T {
    do { return try step() } catch { throw .malformedJSON(error) }
}
