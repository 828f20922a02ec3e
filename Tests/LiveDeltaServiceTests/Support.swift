import ByteJSON
import LiveDeltaService
import MicroHTTP
import Testing

let service = LiveDeltaService(configuration: LiveDeltaService.Configuration())

/// Sends a request straight to the service (no sockets) and reads the answer as JSON.
func post(_ path: String, _ json: String, contentType: String = "application/json") -> (status: Int, body: JSONValue) {
    let response = service.handle(HTTPRequest(method: "POST", path: path, headers: [("Content-Type", contentType)], body: Array(json.utf8)))
    let body = (try? JSONValue(parsing: String(decoding: response.body, as: UTF8.self))) ?? .null
    return (response.status, body)
}

extension JSONValue {
    var int: Int? {
        if case .number(let number) = self { return Int(number.description) }
        return nil
    }

    var array: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    subscript(path: String...) -> JSONValue? {
        path.reduce(Optional(self)) { $0?[$1] }
    }
}
