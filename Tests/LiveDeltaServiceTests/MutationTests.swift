import ByteJSON
import LiveDeltaService
import MicroHTTP
import PropertyBased
import Testing

/// Valid bodies to start from.
let seeds = [
    #"{"old": [{"id": 1, "t": "a"}, {"id": 2}], "new": [{"id": 2}, {"id": 1.0, "t": "b"}], "options": {"includeDeletedItems": true}}"#,
    #"{"options": {"unique": false, "idKey": "m.id"}, "old": [{"m": {"id": "x"}}, {"m": {"id": "x"}}], "new": []}"#,
    #"{"old": {"sections": [{"id": 1, "items": [1, 2]}]}, "new": {"sections": [{"id": 1, "h": 1, "items": [2, "1"]}]}}"#,
    #"{"old": ["\u00e9", -0, 1e3, true, null], "new": [1000, "é", false], "options": {"compareKeys": ["a"], "deltaCountAnimationThreshold": 1}}"#,
]

/// Fragments that have broken parsers before: numbers at and past Int64's edges, huge
/// exponents, escapes, surrogates, invalid UTF-8, deep brackets, structural characters.
let fragments: [[UInt8]] =
    [
        "-9223372036854775809", "9223372036854775808", "1e999999999999999999999", "-0.0e-0", "1E+", "0.", "\\u", "\\ud800",
        "\\udc00\\ud800", "\"", "\\", "{", "}", "[", "]", ",", ":", "null", "tru", "\"id\":", "\"sections\":", "\"items\":",
        String(repeating: "[", count: 600), String(repeating: "{\"a\":", count: 300), "\u{FEFF}", "\t\n",
    ].map { Array($0.utf8) } + [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xFF], [0x00], [0xF4, 0x90, 0x80, 0x80]]

/// Applies `edits` to a seed: each edit inserts a fragment, deletes a run, or overwrites a byte.
func mutate(_ seed: [UInt8], _ edits: [Int]) -> [UInt8] {
    var bytes = seed
    for (index, edit) in edits.enumerated() {
        let at = bytes.isEmpty ? 0 : (edit / 7) % (bytes.count + 1)
        switch (edit + index) % 3 {
        case 0: bytes.insert(contentsOf: fragments[edit % fragments.count], at: at)
        case 1: bytes.removeSubrange(at..<min(bytes.count, at + 1 + edit % 5))
        default: if at < bytes.count { bytes[at] = UInt8(truncatingIfNeeded: edit) }
        }
    }
    return bytes
}

@Suite struct MutationTests {
    /// Whatever the body, the answer is a JSON object with an expected status: never a crash,
    /// a hang or a 5xx.
    @Test func mutatedBodiesAreAnsweredWithJSONAndAnExpectedStatus() async throws {
        let store = InMemorySessionStore()
        let service = LiveDeltaService(sessions: store)
        await propertyCheck(count: 3_000, input: Gen.int(in: 0..<seeds.count), Gen.int(in: 0...10_000).array(of: 1...6), Gen.bool) {
            seed, edits, toSession in
            var body = mutate(Array(seeds[seed].utf8), edits)
            var path = "/diff"
            if toSession {
                // The same bytes as a session update: the "new" collection, if the mutation kept one.
                body = Array("{\"items\":".utf8) + body + Array("}".utf8)
                path = "/sessions/fuzz/update"
            }
            let response = service.handle(HTTPRequest(method: "POST", path: path, headers: [("Content-Type", "application/json")], body: body))
            #expect([200, 201, 400, 412, 413, 422].contains(response.status), "\(String(decoding: body, as: UTF8.self)) -> \(response.status)")
            let answer = try JSONValue(parsing: String(decoding: response.body, as: UTF8.self))
            if response.status >= 400 { #expect(answer["error"]?["code"] != nil) }
        }
    }
}
