import ByteJSON
import LiveDeltaService
import MicroHTTP
import Testing

/// Options are held to the limits openapi.yaml states, so that what a session keeps and shows
/// again in a `GET` always fits its schema.
@Suite struct OptionLimitTests {
    func diff(nestedFields count: Int) throws -> (status: Int, answer: JSONValue) {
        let fields = (0..<count).map { "\"f\($0)\":{}" }.joined(separator: ",")
        let body = "{\"old\":[{\"id\":1}],\"new\":[{\"id\":1}],\"options\":{\"nested\":{\(fields)}}}"
        let response = LiveDeltaService().handle(
            HTTPRequest(method: "POST", path: "/diff", headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
        return (response.status, try JSONValue(parsing: String(decoding: response.body, as: UTF8.self)))
    }

    @Test func nestedTakesAtMostAThousandFields() throws {
        #expect(try diff(nestedFields: 1_000).status == 200)
        let refused = try diff(nestedFields: 1_001)
        #expect(refused.status == 422)
        #expect(refused.answer["error"]?["code"]?.stringValue == "invalid_option")
        #expect(refused.answer["error"]?["pointer"]?.stringValue == "/options/nested")
    }
}

/// A sectioned session's errors point into the body by the session's own `itemsKey`.
@Suite struct SessionPointerTests {
    func send(_ service: LiveDeltaService, _ method: String, _ path: String, _ body: String) throws -> (status: Int, answer: JSONValue) {
        let response = service.handle(
            HTTPRequest(method: method, path: path, headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
        return (response.status, try JSONValue(parsing: String(decoding: response.body, as: UTF8.self)))
    }

    @Test func aDuplicateIDInASectionedSessionIsPointedAtUnderItsItemsKey() throws {
        let service = LiveDeltaService()
        let created = try send(
            service, "PUT", "/sessions/rows",
            #"{"sections":[{"id":"a","rows":[{"id":1},{"id":2}]}],"options":{"itemsKey":"rows"}}"#)
        #expect(created.status == 201)
        let refused = try send(service, "POST", "/sessions/rows/update", #"{"sections":[{"id":"a","rows":[{"id":1},{"id":1}]}]}"#)
        #expect(refused.status == 422)
        #expect(refused.answer["error"]?["code"]?.stringValue == "duplicate_id")
        let pointers = refused.answer["error"]?["pointers"]
        #expect(
            pointers == .array([.string(Array("/sections/0/rows/0".utf8)), .string(Array("/sections/0/rows/1".utf8))]),
            "\(String(describing: refused.answer))")
        let replaced = try send(
            service, "PUT", "/sessions/rows", #"{"sections":[{"id":"a","rows":[{"id":3},{"id":3}]}],"options":{"itemsKey":"rows"}}"#)
        #expect(replaced.status == 422)
        #expect(
            replaced.answer["error"]?["pointers"] == .array([.string(Array("/sections/0/rows/0".utf8)), .string(Array("/sections/0/rows/1".utf8))]),
            "\(String(describing: replaced.answer))")
    }
}
