import ByteJSON
import LiveDeltaService
import MicroHTTP
import PropertyBased
import Testing

/// Generated bodies that each break one rule: every error path answers its own code, its
/// status, a message, and a pointer or offset where the body has a place to point at.
@Suite struct ErrorPathTests {
    /// A body of `kind` built from generated pieces; the code and status it must get.
    static func body(_ kind: Int, ids: [Int], noise: Int, text: String) -> (body: String, status: Int, code: String, pointsInto: Bool) {
        let items = ids.map { "{\"id\":\($0),\"n\":\(noise)}" }.joined(separator: ",")
        let itemsThen = items.isEmpty ? "" : items + ","
        let long = String(repeating: "9", count: 22 + noise % 400)
        let key = text.isEmpty ? "k" : text
        switch kind {
        case 0: return ("{\"old\":[\(items)],\"new\":[" + String(repeating: "[", count: noise % 5 + 1), 400, "malformed_json", true)
        case 1: return ("[\(items)]", 422, "invalid_shape", true)
        case 2: return ("{\"old\":[],\"new\":[],\"options\":{\"x\(key)\":1}}", 422, "invalid_option", true)
        case 3: return ("{\"old\":[\(itemsThen){\"n\":\(noise)}],\"new\":[]}", 422, "missing_id", true)
        case 4: return ("{\"old\":[{\"id\":{\"a\":\(noise)}}],\"new\":[]}", 422, "invalid_id", true)
        case 5: return ("{\"old\":[[\(noise)]],\"new\":[]}", 422, "invalid_item", true)
        case 6: return ("{\"old\":[\(long),\(itemsThen)\(long)e0],\"new\":[]}", 422, "duplicate_id", true)
        case 7: return ("{\"old\":[],\"new\":[],\"old\":[\(items)]}", 422, "duplicate_member", true)
        case 8: return ("{\"old\":[{\"id\":\(noise),\"id\":\(noise + 1)}],\"new\":[]}", 422, "duplicate_member", true)
        case 9: return ("{\"old\":[],\"new\":[],\"options\":{\"compareKeys\":[\"a\"],\"ignoreKeys\":[\"\(key)\"]}}", 422, "invalid_option", true)
        case 10:
            let deep = String(repeating: "[", count: 600 + noise % 100) + String(repeating: "]", count: 600 + noise % 100)
            return ("{\"old\":[],\"new\":[],\"options\":\(deep)}", 400, "malformed_json", true)
        default:
            return ("{\"old\":[\(items)],\"new\":{\"sections\":[]}}", 422, "invalid_shape", true)
        }
    }

    @Test func everyErrorPathAnswersItsCode() async {
        let service = LiveDeltaService()
        let ids = Gen.int(in: -1_000...1_000).array(of: 0...20).map { Array(Set($0)) }
        let text = Gen.int(in: 0x61...0x7A).array(of: 0...12).map { String(decoding: $0.map(UInt8.init), as: UTF8.self) }
        await propertyCheck(count: 1_500, input: Gen.int(in: 0...11), ids, Gen.int(in: 0...100_000), text) { kind, ids, noise, text in
            let expected = Self.body(kind, ids: ids, noise: noise, text: text)
            let response = service.handle(
                HTTPRequest(method: "POST", path: "/diff", headers: [("Content-Type", "application/json")], body: Array(expected.body.utf8)))
            let answer = try JSONValue(parsing: String(decoding: response.body, as: UTF8.self))
            #expect(
                response.status == expected.status && answer["error"]?["code"]?.stringValue == expected.code,
                "\(expected.body) -> \(response.status) \(String(decoding: response.body, as: UTF8.self))")
            #expect(answer["error"]?["message"]?.stringValue?.isEmpty == false)
            #expect(answer["error"]?["pointer"] != nil || answer["error"]?["offset"] != nil)
        }
    }

    /// A body is answered by the first thing wrong in it: of two refused items, the first gets
    /// its code and pointer; past the item limit, 413 comes first; and text that is not JSON
    /// anywhere is a 400.
    @Test func theFirstRefusalAnswers() async {
        let refusals: [(item: String, code: String, pointer: String)] = [
            ("{\"n\":1}", "missing_id", ""),
            ("{\"id\":true}", "invalid_id", "/id"),
            ("[1,2]", "invalid_item", ""),
            ("{\"id\":1,\"id\":2}", "duplicate_member", "/id"),
            ("{}", "missing_id", ""),
            ("{\"id\":[1]}", "invalid_id", "/id"),
        ]
        var configuration = LiveDeltaService.Configuration()
        configuration.maxItemsPerRequest = 600
        let service = LiveDeltaService(configuration: configuration)
        let place = Gen.int(in: 0...700)
        let kind = Gen.int(in: 0...(refusals.count - 1))
        await propertyCheck(count: 400, input: place, place, kind, kind, Gen.int(in: 0...3)) { first, second, kind, otherKind, broken in
            guard first < second else { return }
            let items = (0...second).map { k in
                k == first ? refusals[kind].item : k == second ? refusals[otherKind].item : "{\"id\":\(k),\"title\":\"movie \(k)\"}"
            }
            let body = "{\"old\":[\(items.joined(separator: ","))],\"new\":[]}" + (broken == 0 ? "}" : "")
            let response = service.handle(
                HTTPRequest(method: "POST", path: "/diff", headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
            let answer = try JSONValue(parsing: String(decoding: response.body, as: UTF8.self))
            let code = answer["error"]?["code"]?.stringValue
            if broken == 0 {
                #expect(response.status == 400 && code == "malformed_json")
            } else if first >= 600 {
                #expect(response.status == 413 && code == "too_many_items")
            } else {
                #expect(response.status == 422 && code == refusals[kind].code, "item \(first) of \(second + 1): \(code ?? "none")")
                #expect(answer["error"]?["pointer"]?.stringValue == "/old/\(first)\(refusals[kind].pointer)")
            }
        }
    }

    /// The limits: items per request, and the server-wide item budget.
    @Test func itemLimitsAnswerTheirCodes() async {
        var configuration = LiveDeltaService.Configuration()
        configuration.maxItemsPerRequest = 50
        configuration.maxItemsInFlight = 50
        let service = LiveDeltaService(configuration: configuration)
        await propertyCheck(count: 200, input: Gen.int(in: 0...120)) { count in
            let items = (0..<count).map(String.init).joined(separator: ",")
            let response = service.handle(
                HTTPRequest(
                    method: "POST", path: "/diff", headers: [("Content-Type", "application/json")],
                    body: Array("{\"old\":[\(items)],\"new\":[]}".utf8)))
            #expect(response.status == (count > 50 ? 413 : 200))
            // Nothing stays taken from the budget once a request is answered.
            #expect(service.itemBudget.inUse == 0)
        }
    }
}
