import ByteJSON
import LiveDeltaService
import MicroHTTP
import Testing

/// An update's `changes` rewrite their item whole: many small edits to one large item in one
/// request must be refused, whole, once they would rewrite more than their bound.
@Suite struct KeyedEditBoundTests {
    let service = LiveDeltaService(sessions: InMemorySessionStore())

    func send(_ method: String, _ path: String, _ body: String) -> (status: Int, json: JSONValue?) {
        let response = service.handle(
            HTTPRequest(method: method, path: path, headers: [("Content-Type", "application/json")], body: ByteBuffer(Array(body.utf8))))
        return (response.status, try? JSONValue(parsing: String(decoding: response.body, as: UTF8.self)))
    }

    static func first(_ value: JSONValue) -> JSONValue? {
        guard case .array(let elements) = value else { return nil }
        return elements.first
    }

    func edits(_ count: Int, section: String?) -> String {
        let named = section.map { #","section":"\#($0)""# } ?? ""
        let one = (0..<count).map { #"{"op":"update","id":1\#(named),"changes":{"set":{"v":\#($0)},"removed":[]}}"# }
        return #"{"operations":[\#(one.joined(separator: ","))]}"#
    }

    @Test(arguments: [false, true]) func editsThatWouldRewritePastTheirBoundAreRefusedWhole(sectioned: Bool) throws {
        let item = #"{"id":1,"blob":"\#(String(repeating: "x", count: 1 << 20))","v":0}"#
        let document = sectioned ? #"{"sections":[{"id":"a","items":[\#(item)]}]}"# : #"{"items":[\#(item)]}"#
        #expect(send("PUT", "/sessions/big", document).status == 201)
        let section = sectioned ? "a" : nil
        let refused = send("POST", "/sessions/big/changes", edits(80, section: section))
        #expect(refused.status == 422 && refused.json?["error"]?["code"]?.stringValue == "invalid_operation", "\(refused)")
        #expect(refused.json?["error"]?["pointer"]?.stringValue == "/operations/63/changes")
        #expect(send("GET", "/sessions/big", "").json?["version"] == (try? JSONValue(parsing: "0")))
        // Within the bound, the same edits apply, in order.
        let applied = send("POST", "/sessions/big/changes", edits(20, section: section))
        #expect(applied.status == 200, "\(applied)")
        let stored = try #require(send("GET", "/sessions/big", "").json)
        let items = sectioned ? stored["sections"].flatMap(Self.first)?["items"] : stored["items"]
        #expect(items.flatMap(Self.first)?["v"] == (try JSONValue(parsing: "19")))
    }
}
