import ByteJSON
import LiveDeltaService
import MicroHTTP
import Testing

/// A patch on a flat list keeps the items it left as they were and reads only those it wrote:
/// the list must still come out as the patch says, wherever the kept items went.
@Suite struct PatchEditTests {
    let service = LiveDeltaService(sessions: InMemorySessionStore())

    func send(_ method: String, _ path: String, _ body: String, type: String = "application/json") -> (status: Int, json: JSONValue?) {
        let response = service.handle(HTTPRequest(method: method, path: path, headers: [("Content-Type", type)], body: ByteBuffer(Array(body.utf8))))
        return (response.status, try? JSONValue(parsing: String(decoding: response.body, as: UTF8.self)))
    }

    func items(_ id: String) -> JSONValue? { send("GET", "/sessions/\(id)", "").json?["items"] }

    func patch(_ id: String, _ operations: String) -> (status: Int, json: JSONValue?) {
        send("POST", "/sessions/\(id)/changes", operations, type: "application/json-patch+json")
    }

    @Test func itemsMovedFarOrRemovedLeaveTheListThePatchSays() throws {
        let list = (0..<50).map { #"{"id":\#($0)}"# }.joined(separator: ",")
        #expect(send("PUT", "/sessions/far", #"{"items":[\#(list)]}"#).status == 201)
        let moved = patch("far", #"[{"op":"move","from":"/45","path":"/2"},{"op":"remove","path":"/30"},{"op":"move","from":"/0","path":"/48"}]"#)
        #expect(moved.status == 200)
        var expected = Array(0..<50)
        expected.insert(expected.remove(at: 45), at: 2)
        expected.remove(at: 30)
        expected.insert(expected.remove(at: 0), at: 48)
        let ids = try JSONValue(parsing: "[" + expected.map { #"{"id":\#($0)}"# }.joined(separator: ",") + "]")
        #expect(items("far") == ids)
    }

    /// A pointer whose first token begins with a combining mark is still a pointer: the path
    /// is not found, rather than the pointer misread.
    @Test func aTokenThatBeginsWithACombiningMarkIsAPointer() {
        #expect(send("PUT", "/sessions/c", #"{"items":[{"id":1}]}"#).status == 201)
        let answer = patch("c", #"[{"op":"remove","path":"/\u0301"}]"#)
        #expect(answer.status == 409 && answer.json?["error"]?["code"]?.stringValue == "change_conflict", "\(answer)")
        #expect(answer.json?["error"]?["message"]?.stringValue == "there is nothing at /\u{301}")
        #expect(items("c") == (try? JSONValue(parsing: #"[{"id":1}]"#)))
    }

    /// Copies of a value into itself double it with each operation: a patch of a few
    /// kilobytes would ask for terabytes. Copies pay for what they write, up to a bound.
    @Test func copiesThatWouldWritePastTheirBoundAreRefusedWhole() throws {
        #expect(send("PUT", "/sessions/grow", #"{"items":[{"id":1}]}"#).status == 201)
        let doubling = (0..<60).map { #"{"op":"copy","from":"/0","path":"/0/\#($0 % 2 == 0 ? "a" : "b")"}"# }
        let answer = patch("grow", "[" + doubling.joined(separator: ",") + "]")
        #expect(answer.status == 413 && answer.json?["error"]?["code"]?.stringValue == "session_too_large", "\(answer)")
        let pointer = try #require(answer.json?["error"]?["pointer"]?.stringValue)
        #expect(pointer.hasPrefix("/") && Int(pointer.dropFirst()).map { (20..<60).contains($0) } == true, "\(pointer)")
        #expect(items("grow") == (try? JSONValue(parsing: #"[{"id":1}]"#)))
        #expect(send("GET", "/sessions/grow", "").json?["version"] == (try? JSONValue(parsing: "0")))
        // Within the bound, the same copies apply.
        let few = patch("grow", "[" + doubling.prefix(2).joined(separator: ",") + "]")
        #expect(few.status == 200)
        #expect(items("grow") == (try? JSONValue(parsing: #"[{"id":1,"a":{"id":1},"b":{"id":1,"a":{"id":1}}}]"#)))
    }

    /// A test costs the stored value it reads, which whitespace may make far larger than the
    /// value it gives: tests that would read past their bound are refused whole.
    @Test func testsThatWouldReadPastTheirBoundAreRefusedWhole() throws {
        let padding = String(repeating: " ", count: 1 << 20)
        #expect(send("PUT", "/sessions/pad", #"{"items":[{"id":1,"v":[1,\#(padding)2]}]}"#).status == 201)
        let test = #"{"op":"test","path":"/0/v","value":[1,2]}"#
        #expect(patch("pad", "[" + Array(repeating: test, count: 8).joined(separator: ",") + "]").status == 200)
        let answer = patch("pad", "[" + Array(repeating: test, count: 80).joined(separator: ",") + "]")
        #expect(answer.status == 422 && answer.json?["error"]?["code"]?.stringValue == "invalid_operation", "\(answer)")
        #expect(answer.json?["error"]?["pointer"]?.stringValue == "/63")
        #expect(send("GET", "/sessions/pad", "").json?["version"] == (try? JSONValue(parsing: "1")))
    }

    @Test func aCopiedItemRepeatsItsIdAndIsRefusedInAUniqueList() {
        #expect(send("PUT", "/sessions/u", #"{"items":[{"id":1},{"id":2}]}"#).status == 201)
        let answer = patch("u", #"[{"op":"copy","from":"/0","path":"/2"}]"#)
        #expect(answer.status == 422 && answer.json?["error"]?["code"]?.stringValue == "duplicate_id")
        #expect(answer.json?["error"]?["pointer"]?.stringValue == "/0")
        #expect(items("u") == (try? JSONValue(parsing: #"[{"id":1},{"id":2}]"#)))
    }

    @Test func aNonUniqueListIsNumberedInTheOrderThePatchLeft() throws {
        let created = send("PUT", "/sessions/n", #"{"items":[{"id":"a","v":1},{"id":"b"},{"id":"a","v":2}],"options":{"unique":false}}"#)
        #expect(created.status == 201)
        // The copy of the first "a" goes before "b": the old second "a" is now the third.
        let answer = patch("n", #"[{"op":"copy","from":"/0","path":"/1"}]"#)
        #expect(answer.status == 200)
        #expect(items("n") == (try JSONValue(parsing: #"[{"id":"a","v":1},{"id":"a","v":1},{"id":"b"},{"id":"a","v":2}]"#)))
        // The same list posted as an update is no change at all.
        let same = send("POST", "/sessions/n/delta", #"{"items":[{"id":"a","v":1},{"id":"a","v":1},{"id":"b"},{"id":"a","v":2}]}"#)
        #expect(same.json?["delta"]?["insertions"] == .array([]) && same.json?["delta"]?["reloads"] == .array([]))
    }
}
