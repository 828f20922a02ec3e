import ByteJSON
import LiveCollections
import PropertyBased
import TestSupport
import Testing

/// POST /diff against the real binary, its answers replayed by the delta contract.
@Suite(.serialized) struct DiffTests {
    let server: ServerProcess
    let connection: HTTPConnection

    init() throws {
        server = try ServerProcess()
        connection = try server.connection()
    }

    @Test func flatDiffsReplayToTheNewData() async throws {
        await propertyCheck(count: 200, input: Gens.flatCase) { flat in
            let reply = try connection.request("POST", "/diff", json: "{\"old\":\(json(flat.old)),\"new\":\(json(flat.new))}")
            #expect(reply.status == 200, "\(reply)")
            #expect(reply.json["animation"]?.stringValue == "preciseAnimations")
            let delta = try indexDelta(reply.json["delta"])
            #expect(try delta.replay(old: flat.old, new: flat.new) == flat.new)
            for reload in delta.reloads { #expect(flat.old[reload.source] != flat.new[reload.target]) }
            #expect(delta.moves.count == minimumMoves(old: flat.old.map(\.id), new: flat.new.map(\.id)))
            #expect(reply.json["changeCount"]?.int == delta.changeCount)
            #expect(reply.json["oldCount"]?.int == flat.old.count && reply.json["newCount"]?.int == flat.new.count)
        }
    }

    @Test func sectionedDiffsReplayToTheNewSections() async throws {
        await propertyCheck(count: 200, input: Gens.shelves, Gens.shelves) { old, new in
            let reply = try connection.request("POST", "/diff", json: "{\"old\":\(json(old)),\"new\":\(json(new))}")
            #expect(reply.status == 200, "\(reply)")
            let delta = SectionedDelta(sectionDelta: try indexDelta(reply.json["sectionDelta"]), itemDelta: try pathDelta(reply.json["itemDelta"]))
            let replayed = try delta.replay(old: old, new: new)
            #expect(replayed.map { Shelf(id: $0.section.id, header: $0.section.header, items: $0.items) } == new)
            #expect(delta.itemDelta.moves.count == minimumItemMoves(old: old, new: new))
        }
    }

    @Test func nonUniqueDiffsMatchTheKthOccurrence() async throws {
        await propertyCheck(count: 200, input: Gens.dupes, Gens.dupes) { old, new in
            let body =
                "{\"old\":\(json(old.map { Thing(id: $0.id, content: $0.content) })),\"new\":\(json(new.map { Thing(id: $0.id, content: $0.content) })),\"options\":{\"unique\":false}}"
            let reply = try connection.request("POST", "/diff", json: body)
            #expect(reply.status == 200, "\(reply)")
            let delta = try indexDelta(reply.json["delta"])
            #expect(try delta.replay(old: old, new: new) == new)
            #expect(delta == (try IndexDelta(from: NonUniqueDatum.numbering(old), to: NonUniqueDatum.numbering(new))))
        }
    }

    @Test func equalValuesSpelledDifferentlyAreNotReloads() throws {
        let reply = try connection.request(
            "POST", "/diff",
            json: #"""
                {"old": [{"id": 1, "a": {"x": 1, "y": [1.0, "\u00e9"]}}, {"id": "1", "n": 10}],
                 "new": [{"a": {"y": [1e0, "é"], "x": 1.00}, "id": 1.0}, {"n": 1e1, "id": "1"}]}
                """#)
        #expect(reply.status == 200)
        #expect(try indexDelta(reply.json["delta"]) == IndexDelta())
    }

    @Test func compareKeysAndIgnoreKeysDecideWhatIsAReload() throws {
        let body = { (options: String) in
            #"{"old":[{"id":1,"title":"A","seen":1}],"new":[{"id":1,"title":"A","seen":2}],"options":"# + options + "}"
        }
        #expect(try indexDelta(connection.request("POST", "/diff", json: body("{}")).json["delta"]).reloads.count == 1)
        #expect(try indexDelta(connection.request("POST", "/diff", json: body(#"{"compareKeys":["title"]}"#)).json["delta"]).reloads.isEmpty)
        #expect(try indexDelta(connection.request("POST", "/diff", json: body(#"{"ignoreKeys":["seen"]}"#)).json["delta"]).reloads.isEmpty)
        #expect(try indexDelta(connection.request("POST", "/diff", json: body(#"{"ignoreKeys":["title"]}"#)).json["delta"]).reloads.count == 1)
    }

    @Test func overTheDataThresholdTheDeltaIsLeftOut() throws {
        let reply = try connection.request(
            "POST", "/diff", json: #"{"old":[1,2,3],"new":[3],"options":{"dataCountAnimationThreshold":2,"includeDeletedItems":true}}"#)
        #expect(reply.status == 200)
        #expect(reply.json["animation"]?.stringValue == "reloadSections")
        #expect(reply.json["delta"] == nil)
        #expect(
            reply.json["deletedItems"]
                == JSONValue.array([
                    .number(CanonicalNumber(negative: false, digits: [0x31], exponent: 1)),
                    .number(CanonicalNumber(negative: false, digits: [0x32], exponent: 1)),
                ]))
    }

    /// Each refusal: status, code, where, and the server still answers afterwards.
    @Test(arguments: [
        (#"{"old": [1, 2,, 3], "new": []}"#, 400, "malformed_json"),
        (#"{"old": [1], "new": [2]} trailing"#, 400, "malformed_json"),
        (String(repeating: "[", count: 100_000), 400, "malformed_json"),
        (#"[1, 2]"#, 422, "invalid_shape"),
        (#"{"old": [1]}"#, 422, "invalid_shape"),
        (#"{"old": [1], "new": [1], "extra": 1}"#, 422, "invalid_shape"),
        (#"{"old": [1], "new": {"sections": []}}"#, 422, "invalid_shape"),
        (#"{"old": 5, "new": []}"#, 422, "invalid_shape"),
        (#"{"old": [[1]], "new": []}"#, 422, "invalid_item"),
        (#"{"old": [{"id": {"a": 1}}], "new": []}"#, 422, "invalid_id"),
        (#"{"old": [{"name": 1}], "new": []}"#, 422, "missing_id"),
        (#"{"old": [{"id": 1}, {"id": 1.0}], "new": []}"#, 422, "duplicate_id"),
        (#"{"old": {"sections": [{"id": 1, "items": [{"id": 5}]}, {"id": 2, "items": [{"id": 5}]}]}, "new": {"sections": []}}"#, 422, "duplicate_id"),
        (#"{"old": [], "new": [], "options": {"unique": "no"}}"#, 422, "invalid_option"),
        (#"{"old": [], "new": [], "options": {"dataCountAnimationThreshold": -1}}"#, 422, "invalid_option"),
        (#"{"old": [], "new": [], "options": {"deltaCountAnimationThreshold": 1.5}}"#, 422, "invalid_option"),
        (#"{"old": [], "new": [], "options": {"compareKeys": ["a"], "ignoreKeys": ["b"]}}"#, 422, "invalid_option"),
        (#"{"old": [], "new": [], "options": {"wat": 1}}"#, 422, "invalid_option"),
        (#"{"old": [], "new": [], "options": []}"#, 422, "invalid_option"),
    ])
    func badBodiesAreRefusedWithTheirCode(body: String, status: Int, code: String) throws {
        let reply = try connection.request("POST", "/diff", json: body)
        #expect(reply.status == status, "\(reply)")
        #expect(reply.errorCode == code, "\(reply)")
        #expect(reply.json["error", "message"]?.stringValue?.isEmpty == false)
        #expect(reply.json["error", "pointer"] != nil || reply.json["error", "offset"] != nil, "\(reply)")
        #expect(try connection.request("GET", "/health").status == 200)
    }

    @Test func aDuplicateNamesTheIDBothPlacesAndTheWayOut() throws {
        let reply = try connection.request("POST", "/diff", json: #"{"old": [], "new": [{"id": "a"}, {"id": "b"}, {"id": "a"}]}"#)
        #expect(reply.status == 422)
        #expect(reply.json["error", "pointers"] == .array([.string(Array("/new/0".utf8)), .string(Array("/new/2".utf8))]))
        let message = reply.json["error", "message"]?.stringValue ?? ""
        #expect(message.contains("\"a\"") && message.contains("/new/0") && message.contains("/new/2") && message.contains("\"unique\": false"))
    }

    @Test func errorsPointAtTheirPlace() throws {
        let missing = try connection.request(
            "POST", "/diff", json: #"{"old": {"sections": [{"id": 1, "items": [{"id": 1}, {"x": 2}]}]}, "new": {"sections": []}}"#)
        #expect(missing.json["error", "pointer"]?.stringValue == "/old/sections/0/items/1")
        let malformed = try connection.request("POST", "/diff", json: #"{"old": [1, 2,, 3], "new": []}"#)
        #expect(malformed.json["error", "offset"]?.int == 14)
    }

    @Test func invalidUTF8IsMalformed() throws {
        let reply = try connection.request("POST", "/diff", body: Array(#"{"old": [""#.utf8) + [0xC0, 0xAF] + Array(#""], "new": []}"#.utf8))
        #expect(reply.status == 400 && reply.errorCode == "malformed_json")
        #expect(reply.json["error", "message"]?.stringValue?.contains("UTF-8") == true)
    }

    @Test func malformedJSONWinsOverAShapeError() throws {
        // The first item has no id, but the text is not JSON further on: a 400.
        let reply = try connection.request("POST", "/diff", json: #"{"old": [{"x": 1}], "new": [1, }"#)
        #expect(reply.status == 400)
    }

    @Test func aBodyThatIsNotDeclaredJSONIs415() throws {
        for headers in [[("Content-Type", "text/plain")], []] as [[(String, String)]] {
            let reply = try connection.request("POST", "/diff", body: Array(#"{"old":[],"new":[]}"#.utf8), headers: headers)
            #expect(reply.status == 415 && reply.errorCode == "unsupported_media_type")
        }
        let vendor = try connection.request(
            "POST", "/diff", body: Array(#"{"old":[],"new":[]}"#.utf8), headers: [("Content-Type", "application/vnd.api+json; charset=utf-8")])
        #expect(vendor.status == 200)
    }

    @Test func unknownPathsAre404AndWrongMethods405WithAllow() throws {
        let missing = try connection.request("GET", "/nowhere")
        #expect(missing.status == 404 && missing.errorCode == "not_found")
        let wrong = try connection.request("GET", "/diff")
        #expect(wrong.status == 405 && wrong.errorCode == "method_not_allowed" && wrong.header("Allow") == "POST, OPTIONS")
        let health = try connection.request("DELETE", "/health")
        #expect(health.status == 405 && health.header("Allow") == "GET, HEAD, OPTIONS")
    }
}

/// Each format's answer to one diff, whole: the wire shapes the README and openapi.yaml show.
@Suite struct DeltaFormatTests {
    static let body = #"{"old":[{"id":1,"t":"a"},{"id":2},{"id":3},{"id":9}],"new":[{"id":3},{"id":1,"t":"b"},{"id":4},{"id":9}]"#

    @Test(arguments: [
        (
            "sequential",
            #""sequential":[{"op":"remove","position":1,"count":1},{"op":"move","from":0,"to":1},{"op":"insert","position":2,"count":1},{"op":"change","position":1,"count":1}]"#
        ),
        (
            "jsonPatch",
            #""jsonPatch":[{"op":"remove","path":"/1"},{"op":"move","from":"/0","path":"/1"},{"op":"add","path":"/2","value":{"id":4}},{"op":"replace","path":"/1","value":{"id":1,"t":"b"}}]"#
        ),
        (
            "keyed",
            #""keyed":[{"op":"remove","id":2},{"op":"move","id":1,"before":9},{"op":"insert","id":4,"before":9,"item":{"id":4}},{"op":"update","id":1,"item":{"id":1,"t":"b"}}]"#
        ),
    ])
    func eachFormatSpellsTheDelta(format: String, member: String) throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        let answer = try connection.request("POST", "/diff", json: Self.body + #","options":{"format":"\#(format)"}}"#)
        let expected = #"{"animation":"preciseAnimations","format":"\#(format)",\#(member),"changeCount":4,"oldCount":4,"newCount":4}"#
        let parsed = try JSONValue(parsing: expected)
        #expect(answer.status == 200)
        #expect(answer.json == parsed)
        // A session answers in the format each request asks for, whatever it was created with.
        #expect(try connection.request("PUT", "/sessions/f", json: #"{"items":[{"id":1,"t":"a"},{"id":2},{"id":3},{"id":9}]}"#).status == 201)
        let update = try connection.request(
            "POST", "/sessions/f/update", json: #"{"items":[{"id":3},{"id":1,"t":"b"},{"id":4},{"id":9}],"options":{"format":"\#(format)"}}"#)
        #expect(update.status == 200 && update.json["format"]?.stringValue == format && update.json["delta"] == nil)
        #expect(update.text.contains(member))
    }

    /// Sections in one list of operations: sections removed, moved, inserted (with their
    /// items), then items, then sections whose own fields changed.
    @Test(arguments: [
        (
            "sequential",
            #""sequential":[{"op":"removeSections","position":0,"count":1},{"op":"insertSections","position":1,"count":1},{"op":"insert","section":0,"position":1,"count":1},{"op":"changeSections","position":0,"count":1}]"#
        ),
        (
            "jsonPatch",
            #""jsonPatch":[{"op":"remove","path":"/sections/0"},{"op":"add","path":"/sections/1","value":{"id":"c","title":"C","items":[{"id":4}]}},{"op":"add","path":"/sections/0/items/1","value":{"id":1}},{"op":"replace","path":"/sections/0/title","value":"B!"}]"#
        ),
        (
            "keyed",
            #""keyed":[{"op":"removeSection","id":"a"},{"op":"insertSection","id":"c","before":null,"section":{"id":"c","title":"C","items":[{"id":4}]}},{"op":"insert","id":1,"section":"b","before":null,"item":{"id":1}},{"op":"updateSection","id":"b","section":{"id":"b","title":"B!","items":[{"id":3},{"id":1}]}}]"#
        ),
    ])
    func sectionsAreSpelledInEachFormat(format: String, member: String) throws {
        let server = try ServerProcess()
        let body =
            #"{"old":{"sections":[{"id":"a","title":"A","items":[{"id":1},{"id":2}]},{"id":"b","title":"B","items":[{"id":3}]}]},"#
            + #""new":{"sections":[{"id":"b","title":"B!","items":[{"id":3},{"id":1}]},{"id":"c","title":"C","items":[{"id":4}]}]},"#
            + #""options":{"format":"\#(format)"}}"#
        let answer = try server.connection().request("POST", "/diff", json: body)
        let expected = try JSONValue(
            parsing: #"{"sectionAnimation":"preciseAnimations","itemAnimation":"preciseAnimations","format":"\#(format)",\#(member),"#
                + #""changeCount":4,"oldSectionCount":2,"newSectionCount":2,"oldCount":3,"newCount":3}"#)
        #expect(answer.status == 200)
        #expect(answer.json == expected)
    }
}

/// `changes: "fields"`: a reload says which fields changed, following the content filter.
@Suite struct FieldChangeTests {
    @Test func aReloadNamesTheChangedFieldsOnly() throws {
        let server = try ServerProcess()
        let body =
            #"{"old":[{"id":1,"title":"Alien","year":1979,"seen":false,"tmp":1}],"#
            + #""new":[{"id":1,"title":"Alien","year":1980,"seen":true,"note":"x"}],"options":{"changes":"fields","ignoreKeys":["seen"]}}"#
        let answer = try server.connection().request("POST", "/diff", json: body)
        let expected = try JSONValue(parsing: #"[{"source":0,"target":0,"changes":{"set":{"year":1980,"note":"x"},"removed":["tmp"]}}]"#)
        #expect(answer.status == 200)
        #expect(answer.json["delta", "reloads"] == expected)
    }
}

/// `nested`: a changed row's list comes as its own delta, in the answer's format.
@Suite struct NestedListTests {
    static let body =
        #"{"old":[{"id":1,"shelf":"Sci-fi","movies":[{"id":10},{"id":11}]}],"#
        + #""new":[{"id":1,"shelf":"Sci-fi!","movies":[{"id":11},{"id":12}]}],"#

    @Test func aRowsListIsAnsweredWithItsOwnDelta() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        let batch = try connection.request("POST", "/diff", json: Self.body + #""options":{"nested":{"movies":{}},"changes":"fields"}}"#)
        let expected = try JSONValue(
            parsing: #"[{"source":0,"target":0,"changes":{"set":{"shelf":"Sci-fi!"},"removed":[]},"nested":{"movies":"#
                + #"{"animation":"preciseAnimations","delta":{"deletions":[0],"insertions":[1],"moves":[],"reloads":[]},"changeCount":2,"oldCount":2,"newCount":2}}}]"#
        )
        #expect(batch.status == 200)
        #expect(batch.json["delta", "reloads"] == expected)
        let patch = try connection.request("POST", "/diff", json: Self.body + #""options":{"nested":{"movies":{}},"format":"jsonPatch"}}"#)
        let operations = try JSONValue(
            parsing:
                #"[{"op":"replace","path":"/0/shelf","value":"Sci-fi!"},{"op":"remove","path":"/0/movies/0"},{"op":"add","path":"/0/movies/1","value":{"id":12}}]"#
        )
        #expect(patch.json["jsonPatch"] == operations)
    }

    @Test func nestedOptionsAreCheckedAndBounded() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        let formatInside = try connection.request("POST", "/diff", json: Self.body + #""options":{"nested":{"movies":{"format":"keyed"}}}}"#)
        #expect(formatInside.status == 422 && formatInside.json["error", "pointer"]?.stringValue == "/options/nested/movies")
        let deep = #"{"nested":{"a":{"nested":{"b":{"nested":{"c":{"nested":{"d":{"nested":{"e":{}}}}}}}}}}}"#
        let tooDeep = try connection.request("POST", "/diff", json: Self.body + #""options":\#(deep)}"#)
        #expect(tooDeep.status == 422 && tooDeep.errorCode == "invalid_option")
        // A list its options cannot diff (an item without its id) changes as any other field.
        let noIDs =
            #"{"old":[{"id":1,"movies":[{"x":1}]}],"new":[{"id":1,"movies":[{"x":2}]}],"options":{"nested":{"movies":{}},"changes":"fields"}}"#
        let whole = try connection.request("POST", "/diff", json: noIDs)
        let asField = try JSONValue(parsing: #"[{"source":0,"target":0,"changes":{"set":{"movies":[{"x":2}]},"removed":[]}}]"#)
        #expect(whole.status == 200)
        #expect(whole.json["delta", "reloads"] == asField)
    }
}
