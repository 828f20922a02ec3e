import ByteJSON
import Foundation
import LiveCollections
import TestSupport
import Testing

/// Live windows against the real binary: a subscriber of a few rows of a session holds, after
/// every event, exactly the session's rows at that version where its window says they are, and
/// its window is where the rules put it (an offset stays, a keyset window follows its anchor).
@Suite struct WindowTests {
    /// A row of the test's sessions.
    struct Row: Equatable, CustomStringConvertible {
        var id: Int
        var v: Int
        var json: String { "{\"id\":\(id),\"v\":\(v)}" }
        var description: String { "\(id):\(v)" }

        init(id: Int, v: Int) {
            self.id = id
            self.v = v
        }

        init?(_ value: JSONValue) {
            guard let id = value["id"]?.int, let v = value["v"]?.int else { return nil }
            self.init(id: id, v: v)
        }
    }

    /// The session's rows at each version, by `<incarnation>.<version>`, read after each write.
    final class Session {
        let connection: HTTPConnection
        let name: String
        private(set) var states: [String: [Row]] = [:]
        private(set) var rows: [Row] = []
        private(set) var incarnation = ""
        private(set) var version = 0
        private var nextID = 1_000

        /// The rows a read may ask for (`--max-window-rows`).
        let maxRows: Int

        /// The session's options, given with every `PUT` (a new life starts from its body's).
        let options: String?

        init(connection: HTTPConnection, name: String, rows: [Row], maxRows: Int = 1_000, options: String? = nil) throws {
            self.connection = connection
            self.name = name
            self.maxRows = maxRows
            self.options = options
            try replace(rows)
        }

        func newID() -> Int {
            nextID += 1
            return nextID
        }

        func replace(_ rows: [Row]) throws {
            var body = Self.body(rows)
            if let options { body = String(body.dropLast()) + ",\"options\":\(options)}" }
            let reply = try connection.request("PUT", "/sessions/\(name)", json: body)
            guard reply.status == 200 || reply.status == 201 else { throw WireError.shape("PUT: \(reply)") }
            try record()
        }

        /// Reads the session whole (as a window over all of it, which also says its life).
        func record() throws {
            let reply = try connection.request("GET", "/sessions/\(name)?limit=\(maxRows)")
            guard reply.status == 200, let token = reply.json["token"]?.stringValue, let items = reply.json["items"]?.array,
                let version = reply.json["version"]?.int
            else { throw WireError.shape("GET: \(reply)") }
            incarnation = String(token.prefix { $0 != "." })
            self.version = version
            rows = items.compactMap(Row.init)
            states["\(incarnation).\(version)"] = rows
        }

        func write(_ method: String, _ path: String, _ body: String, patch: Bool = false) throws {
            let reply = try connection.request(
                method, "/sessions/\(name)\(path)", json: body,
                headers: [("Content-Type", patch ? "application/json-patch+json" : "application/json")])
            guard reply.status == 200 else { throw WireError.shape("\(path) \(body): \(reply)") }
            try record()
            guard version == reply.json["version"]?.int else { throw WireError.shape("another writer?") }
        }

        static func body(_ rows: [Row]) -> String { "{\"items\":[\(rows.map(\.json).joined(separator: ","))]}" }

        /// One random write of any kind: keyed changes, a JSON Patch, a whole update, an append.
        func randomWrite(_ random: inout some RandomNumberGenerator) throws {
            let kind = Int.random(in: 0..<10, using: &random)
            switch kind {
            case 0..<4: try write("POST", "/changes", "{\"operations\":[\(keyedOperations(&random).joined(separator: ","))]}")
            case 4..<6: try write("POST", "/changes", "[\(patchOperations(&random).joined(separator: ","))]", patch: true)
            case 6..<9: try write("POST", "/update", Self.body(shuffled(&random)))
            default:
                try write("POST", "/append", Self.body((0..<Int.random(in: 1...3, using: &random)).map { _ in Row(id: newID(), v: 0) }))
            }
        }

        func randomKeyedOperations(_ random: inout some RandomNumberGenerator) -> [String] { keyedOperations(&random) }

        private func keyedOperations(_ random: inout some RandomNumberGenerator) -> [String] {
            var ids = rows.map(\.id)
            var operations: [String] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let before = ids.randomElement(using: &random).map(String.init) ?? "null"
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where !ids.isEmpty:
                    let id = ids.remove(at: Int.random(in: 0..<ids.count, using: &random))
                    operations.append("{\"op\":\"remove\",\"id\":\(id)}")
                case 1 where ids.count > 1:
                    let id = ids.randomElement(using: &random)!
                    guard String(id) != before else { continue }
                    operations.append("{\"op\":\"move\",\"id\":\(id),\"before\":\(before)}")
                case 2 where !ids.isEmpty:
                    let id = ids.randomElement(using: &random)!
                    operations.append("{\"op\":\"update\",\"id\":\(id),\"item\":\(Row(id: id, v: Int.random(in: 1...9, using: &random)).json)}")
                default:
                    let id = newID()
                    ids.append(id)
                    operations.append("{\"op\":\"insert\",\"id\":\(id),\"item\":\(Row(id: id, v: 0).json),\"before\":\(before)}")
                }
            }
            return operations
        }

        private func patchOperations(_ random: inout some RandomNumberGenerator) -> [String] {
            var count = rows.count
            var operations: [String] = []
            for _ in 0..<Int.random(in: 1...2, using: &random) {
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where count > 0:
                    operations.append("{\"op\":\"remove\",\"path\":\"/\(Int.random(in: 0..<count, using: &random))\"}")
                    count -= 1
                case 1 where count > 1:
                    let from = Int.random(in: 0..<count, using: &random)
                    operations.append("{\"op\":\"move\",\"from\":\"/\(from)\",\"path\":\"/\(Int.random(in: 0..<count, using: &random))\"}")
                case 2 where count > 0:
                    operations.append("{\"op\":\"replace\",\"path\":\"/\(Int.random(in: 0..<count, using: &random))/v\",\"value\":7}")
                default:
                    operations.append(
                        "{\"op\":\"add\",\"path\":\"/\(Int.random(in: 0...count, using: &random))\",\"value\":\(Row(id: newID(), v: 0).json)}")
                    count += 1
                }
            }
            return operations
        }

        /// The rows with a few removed, inserted, moved and changed, anywhere.
        private func shuffled(_ random: inout some RandomNumberGenerator) -> [Row] {
            var list = rows
            for _ in 0..<Int.random(in: 0...3, using: &random) where !list.isEmpty { list.remove(at: Int.random(in: 0..<list.count, using: &random)) }
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                list.insert(Row(id: newID(), v: 0), at: Int.random(in: 0...list.count, using: &random))
            }
            for _ in 0..<Int.random(in: 0...2, using: &random) where list.count > 1 {
                let row = list.remove(at: Int.random(in: 0..<list.count, using: &random))
                list.insert(row, at: Int.random(in: 0...list.count, using: &random))
            }
            for _ in 0..<Int.random(in: 0...3, using: &random) where !list.isEmpty {
                list[Int.random(in: 0..<list.count, using: &random)].v += 1
            }
            return list
        }
    }

    /// Where the rules put a window in `rows`; nil where `seen`'s anchor is not there.
    static func expectedRows(_ query: String, window: JSONValue, in rows: [Row]) -> Range<Int>? {
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            parameters[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        let limit = Int(parameters["limit"] ?? "") ?? 0
        let overscan = Int(parameters["overscan"] ?? "") ?? 0
        let total = rows.count
        func clamp(_ start: Int) -> Range<Int> {
            let lower = min(total, max(0, start - overscan))
            return lower..<min(total, max(lower, start + limit + overscan))
        }
        func position(_ key: String, edge: Int) -> Int? {
            guard let anchor = window[key] else { return nil }
            if anchor == .null { return edge }
            return rows.firstIndex { $0.id == anchor.int }
        }
        if parameters["after"] != nil { return position("after", edge: -1).map { clamp($0 + 1) } }
        if parameters["before"] != nil { return position("before", edge: total).map { clamp($0 - limit) } }
        return clamp(Int(parameters["offset"] ?? "0") ?? 0)
    }

    /// Everything `follower` held matches the session at that version.
    static func check(_ follower: WindowFollower, states: [String: [Row]]) -> [String] {
        var problems = follower.problems
        for seen in follower.seen {
            guard let state = states["\(seen.incarnation).\(seen.version)"] else {
                problems.append("no state \(seen.incarnation).\(seen.version)")
                continue
            }
            let offset = seen.window["offset"]?.int ?? -1
            let count = seen.window["count"]?.int ?? -1
            let rows = seen.rows.compactMap(Row.init)
            guard seen.window["total"]?.int == state.count, offset >= 0, offset + count <= state.count, rows.count == count else {
                problems.append("\(seen.event) \(seen.version): window \(seen.window) over \(state.count) rows holds \(rows.count)")
                continue
            }
            if rows != Array(state[offset..<offset + count]) {
                problems.append("\(seen.event) \(seen.version): holds \(rows), the session \(Array(state[offset..<offset + count]))")
            }
            let query = seen.query
            if expectedRows(query, window: seen.window, in: state) != offset..<offset + count {
                problems.append("\(seen.event) \(seen.version): window \(seen.window) is not where \(query) puts it")
            }
        }
        return problems
    }

    /// Each format, and the two that give positions only carrying only the rows they insert
    /// or change (`rows=changed`).
    static let formats = ["batch", "sequential", "keyed", "jsonPatch", "batch&rows=changed", "sequential&rows=changed"]

    /// Random writes of every kind and random scrolls; each follower's rows are the session's
    /// rows in its window at every version it reached, in every format, flat, in both stores.
    /// With a `dataCountAnimationThreshold` of 20 the session (about 30 to 60 rows) is over it
    /// and every window (at most 16 rows) under it: a whole update, which tells a client of
    /// the whole list to reload, still sends each window its rows' delta.
    @Test(arguments: StoreKind.allCases, [nil, 20]) func windowsHoldTheSessionsRowsAtEveryVersion(store: StoreKind, threshold: Int?) throws {
        let fixture = try Fixture(store)
        var random = SystemRandomNumberGenerator()
        let session = try Session(
            connection: fixture.connection, name: "win", rows: (0..<60).map { Row(id: $0, v: 0) }.shuffled(using: &random),
            options: threshold.map { "{\"dataCountAnimationThreshold\":\($0)}" })
        func windows() -> [String] {
            let ids = session.rows.map(\.id)
            return [
                "offset=0&limit=8", "offset=20&limit=10&overscan=2", "after=\(ids[30])&limit=6", "before=\(ids[45])&limit=7&overscan=1",
                "offset=\(ids.count - 4)&limit=10",
            ]
        }
        var followers: [WindowFollower] = []
        for query in windows() {
            for format in Self.formats {
                followers.append(try WindowFollower(port: fixture.server.port, session: "win", format: format, query: query))
            }
        }
        func catchUp() throws {
            for follower in followers {
                let reached = (try? follower.follow(until: session.version, of: session.incarnation)) ?? false
                #expect(
                    reached,
                    "\(follower.format) \(follower.query) at \(follower.incarnation ?? "").\(follower.version ?? -1), not \(session.incarnation).\(session.version): \(follower.problems.prefix(2))"
                )
            }
        }
        try catchUp()
        for _ in 0..<25 { try session.randomWrite(&random) }
        try catchUp()
        // Scrolls: each follower moves its window and is sent one delta from what it held.
        for follower in followers {
            let ids = session.rows.map(\.id)
            let query =
                switch Int.random(in: 0..<3, using: &random) {
                case 0: "offset=\(Int.random(in: 0..<max(1, ids.count), using: &random))&limit=\(Int.random(in: 1...12, using: &random))"
                case 1: "after=\(ids.randomElement(using: &random)!)&limit=\(Int.random(in: 1...12, using: &random))&overscan=2"
                default: "before=\(ids.randomElement(using: &random)!)&limit=\(Int.random(in: 1...12, using: &random))"
                }
            // A window of the same rows at the same version has nothing to be sent.
            let placed = try fixture.connection.request("GET", "/sessions/win?\(query)").json["window"]
            let same = placed?["offset"] == follower.window?["offset"] && placed?["count"] == follower.window?["count"]
            try follower.move(to: query)
            if same { continue }
            let event = try follower.next()
            #expect(
                event == "delta",
                "a scroll to \(query) was sent \(event ?? "nothing"): \(follower.client.status) \(String(decoding: follower.client.body, as: UTF8.self))"
            )
        }
        for _ in 0..<25 { try session.randomWrite(&random) }
        try catchUp()
        try session.replace((0..<30).map { Row(id: $0, v: 1) })
        for _ in 0..<10 { try session.randomWrite(&random) }
        try catchUp()
        var deltas = 0
        for follower in followers {
            let problems = Self.check(follower, states: session.states)
            // Reset twice: at the start and at the new life; every other step a delta or a total.
            let counts = Dictionary(grouping: follower.seen, by: \.event).mapValues(\.count)
            #expect(counts["reset"] == 2, "\(follower.format) \(follower.query): \(counts)")
            deltas += counts["delta"] ?? 0
            #expect(problems.isEmpty, "\(follower.format) \(follower.query): \(problems.prefix(3))")
        }
        #expect(deltas >= followers.count * 5, "\(deltas) deltas")
    }

    /// A keyset window whose anchor is deleted takes the nearest row kept on the side it reads
    /// from, and reads from the edge once none is left; one whose anchor moves goes with it.
    @Test func aDeletedAnchorHandsOverToTheNearestRowOnItsSide() throws {
        let fixture = try Fixture(.memory)
        let session = try Session(connection: fixture.connection, name: "anchors", rows: (0..<20).map { Row(id: $0, v: 0) })
        let port = fixture.server.port
        let after = try WindowFollower(port: port, session: "anchors", format: "keyed", query: "after=5&limit=3")
        let before = try WindowFollower(port: port, session: "anchors", format: "keyed", query: "before=10&limit=3")
        func step(_ operations: String) throws -> (after: JSONValue?, before: JSONValue?) {
            try session.write("POST", "/changes", "{\"operations\":[\(operations)]}")
            #expect(try after.follow(until: session.version, of: session.incarnation))
            #expect(try before.follow(until: session.version, of: session.incarnation))
            return (after.window?["after"], before.window?["before"])
        }
        #expect(try after.follow(until: 0, of: session.incarnation) && after.rows.compactMap(Row.init).map(\.id) == [6, 7, 8])
        #expect(try before.follow(until: 0, of: session.incarnation) && before.rows.compactMap(Row.init).map(\.id) == [7, 8, 9])
        var anchors = try step(#"{"op":"remove","id":5},{"op":"remove","id":10}"#)
        #expect(anchors.after?.int == 4 && anchors.before?.int == 11)
        #expect(after.rows.compactMap(Row.init).map(\.id) == [6, 7, 8] && before.rows.compactMap(Row.init).map(\.id) == [7, 8, 9])
        anchors = try step(
            (0...4).map { #"{"op":"remove","id":\#($0)}"# }.joined(separator: ",") + ","
                + (11...19).map { #"{"op":"remove","id":\#($0)}"# }.joined(separator: ","))
        #expect(anchors.after == .null && anchors.before == .null)
        #expect(after.rows.compactMap(Row.init).map(\.id) == [6, 7, 8] && before.rows.compactMap(Row.init).map(\.id) == [7, 8, 9])
        // An anchor that moves takes its window along.
        let moving = try WindowFollower(port: port, session: "anchors", format: "batch", query: "after=8&limit=2")
        #expect(try moving.follow(until: session.version, of: session.incarnation) && moving.rows.compactMap(Row.init).map(\.id) == [9])
        _ = try step(#"{"op":"move","id":8,"before":6}"#)
        #expect(try moving.follow(until: session.version, of: session.incarnation))
        #expect(moving.rows.compactMap(Row.init).map(\.id) == [6, 7] && moving.window?["offset"]?.int == 1)
        for follower in [after, before, moving] { #expect(Self.check(follower, states: session.states).isEmpty) }
    }

    /// Commits outside a keyset window send it no rows: only its total, at most once a second.
    @Test func commitsOutsideAKeysetWindowSendATotalAtMostOnceASecond() throws {
        let fixture = try Fixture(.memory)
        let session = try Session(connection: fixture.connection, name: "quiet", rows: (0..<200).map { Row(id: $0, v: 0) })
        let follower = try WindowFollower(port: fixture.server.port, session: "quiet", format: "keyed", query: "after=50&limit=5")
        #expect(try follower.follow(until: 0, of: session.incarnation))
        let start = Date()
        for round in 0..<30 {
            try session.write("POST", "/changes", #"{"operations":[{"op":"update","id":150,"item":{"id":150,"v":\#(round + 1)}}]}"#)
        }
        try session.write("POST", "/append", Session.body([Row(id: 999, v: 0)]))
        #expect(try follower.follow(until: session.version, of: session.incarnation))
        let seconds = Date().timeIntervalSince(start)
        let events = follower.seen.dropFirst().map(\.event)
        #expect(events.allSatisfy { $0 == "window" }, "\(events)")
        #expect(events.count <= Int(seconds) + 2, "\(events.count) events in \(seconds) s")
        #expect(follower.window?["total"]?.int == 201)
        #expect(Self.check(follower, states: session.states).isEmpty)
    }

    /// Hundreds of windows of one session: a fan-out pass moves those a commit passes by
    /// without a word and sends the others their deltas from several threads at once; each
    /// window still gets its own steps in order, and holds the session's rows at every version.
    @Test func hundredsOfWindowsFollowOneSessionInOrder() throws {
        let fixture = try Fixture(
            .memory, arguments: ["--max-subscribers-per-session", "1000", "--max-connections-per-client", "1000", "--stream-opens-per-second", "0"])
        var random = SystemRandomNumberGenerator()
        let session = try Session(connection: fixture.connection, name: "many", rows: (0..<400).map { Row(id: $0, v: 0) })
        var followers: [WindowFollower] = []
        for index in 0..<300 {
            let query = index.isMultiple(of: 2) ? "offset=\(index)&limit=5" : "after=\(index)&limit=4"
            followers.append(try WindowFollower(port: fixture.server.port, session: "many", format: index % 3 == 0 ? "batch" : "keyed", query: query))
        }
        for round in 0..<8 {
            // An insert at the top shifts every offset window; an update near the end passes
            // most windows by; a random write may touch any.
            let id = session.newID()
            let top = session.rows.first.map { String($0.id) } ?? "null"
            try session.write("POST", "/changes", #"{"operations":[{"op":"insert","id":\#(id),"item":\#(Row(id: id, v: 0).json),"before":\#(top)}]}"#)
            let low = session.rows[session.rows.count - 1 - round].id
            try session.write("POST", "/changes", #"{"operations":[{"op":"update","id":\#(low),"item":\#(Row(id: low, v: round + 1).json)}]}"#)
            try session.randomWrite(&random)
        }
        for follower in followers {
            #expect(
                try follower.follow(until: session.version, of: session.incarnation),
                "\(follower.query): \(follower.client.status) \(follower.problems.prefix(2))")
            let problems = Self.check(follower, states: session.states)
            #expect(problems.isEmpty, "\(follower.format) \(follower.query): \(problems.prefix(3))")
            #expect(follower.seen.filter { $0.event == "reset" }.count == 1, "\(follower.query)")
        }
    }

    /// Scrolling 10 rows of a 50-row window is one delta of at most 10 rows out and 10 in.
    @Test func aScrollIsOneSmallDeltaNeverAReset() throws {
        let fixture = try Fixture(.memory)
        let session = try Session(connection: fixture.connection, name: "scroll", rows: (0..<1_000).map { Row(id: $0, v: 0) })
        let follower = try WindowFollower(port: fixture.server.port, session: "scroll", format: "keyed", query: "offset=100&limit=50")
        #expect(try follower.follow(until: 0, of: session.incarnation))
        try follower.move(to: "offset=110&limit=50")
        let event = try follower.client.next()
        let data = try JSONValue(parsing: event?.data ?? "")
        let operations = data["keyed"]?.array ?? []
        #expect(event?.event == "delta" && operations.count == 20, "\(String(describing: event))")
        #expect(operations.filter { $0["op"]?.stringValue == "remove" }.count == 10)
        // The same window at the same version again: nothing to send.
        try follower.move(to: "offset=110&limit=50")
        try session.write("POST", "/append", Session.body([Row(id: 5_000, v: 0)]))
        #expect(try follower.client.next()?.event == "window")
    }

    /// With `rows=changed`, a batch scroll carries the 10 rows that enter the window, not the
    /// 50 it shows, and so does a commit that changes one row in it.
    @Test(arguments: ["batch", "sequential"]) func aScrollCarriesOnlyTheRowsThatEnter(format: String) throws {
        let fixture = try Fixture(.memory)
        let session = try Session(connection: fixture.connection, name: "entering", rows: (0..<1_000).map { Row(id: $0, v: 0) })
        let follower = try WindowFollower(
            port: fixture.server.port, session: "entering", format: format + "&rows=changed", query: "offset=100&limit=50")
        #expect(try follower.follow(until: 0, of: session.incarnation))
        try follower.move(to: "offset=110&limit=50")
        #expect(try follower.next() == "delta")
        let scrolled = try JSONValue(parsing: follower.lastData)
        #expect(scrolled["items"] == nil && scrolled["rows"]?.array?.compactMap { $0["id"]?.int } == Array(150..<160))
        #expect(follower.rows.compactMap { $0["id"]?.int } == Array(110..<160) && follower.problems.isEmpty)
        try session.write("POST", "/changes", #"{"operations":[{"op":"update","id":120,"item":{"id":120,"v":7}}]}"#)
        #expect(try follower.next() == "delta")
        let changed = try JSONValue(parsing: follower.lastData)
        #expect(changed["rows"]?.array?.map { $0["v"]?.int } == [7] && follower.rows[10]["v"]?.int == 7)
        #expect(follower.problems.isEmpty, "\(follower.problems)")
    }

    /// With a history of two versions (as a million-row session has within the history's
    /// bytes), a window that reconnects or scrolls from a version trimmed from the history is
    /// caught up in one delta from what is left of the changes (LiveTrace), never reset, and
    /// holds the session's rows, in every format.
    @Test(arguments: ["keyed", "batch", "sequential", "jsonPatch"]) func aWindowResumesPastTheHistoryByOneDelta(format: String) throws {
        let fixture = try Fixture(.memory, arguments: ["--live-history", "2"])
        var random = SystemRandomNumberGenerator()
        let session = try Session(connection: fixture.connection, name: "traced", rows: (0..<300).map { Row(id: $0, v: 0) })
        let follower = try WindowFollower(port: fixture.server.port, session: "traced", format: format, query: "offset=100&limit=20")
        #expect(try follower.follow(until: session.version, of: session.incarnation))
        for round in 0..<12 {
            // Reads nothing for a few changes (more than the history holds), then reconnects at
            // another window from the last version it read.
            for _ in 0..<Int.random(in: 3...6, using: &random) {
                try session.write("POST", "/changes", "{\"operations\":[\(session.randomKeyedOperations(&random).joined(separator: ","))]}")
            }
            let offset = Int.random(in: 0...(session.rows.count - 20), using: &random)
            try follower.move(to: "offset=\(offset)&limit=20")
            #expect(try follower.follow(until: session.version, of: session.incarnation), "round \(round)")
            #expect(follower.seen.last?.event == "delta", "round \(round): \(follower.seen.last?.event ?? "nothing")")
        }
        let problems = Self.check(follower, states: session.states)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        #expect(!follower.seen.dropFirst().contains { $0.event == "reset" })
    }

    /// A long poll takes the same window, and its `next` token resumes that window.
    @Test func aLongPollFollowsAWindow() throws {
        let fixture = try Fixture(.memory)
        let session = try Session(connection: fixture.connection, name: "polled", rows: (0..<30).map { Row(id: $0, v: 0) })
        let first = try fixture.connection.request("GET", "/sessions/polled/changes?offset=10&limit=5&wait=0")
        #expect(first.status == 200)
        let reset = first.json["events"]?.array?.first
        #expect(reset?["event"]?.stringValue == "reset" && reset?["data"]?["items"]?.array?.count == 5)
        let next = try #require(first.json["next"]?.stringValue)
        #expect(next.hasSuffix("~10-5"))
        try session.write("POST", "/changes", #"{"operations":[{"op":"remove","id":0}]}"#)
        let second = try fixture.connection.request("GET", "/sessions/polled/changes?offset=10&limit=5&format=keyed&wait=5&since=\(next)")
        let delta = second.json["events"]?.array?.first
        #expect(delta?["event"]?.stringValue == "delta", "\(second)")
        #expect(delta?["data"]?["keyed"]?.array?.map { $0["op"]?.stringValue ?? "" } == ["remove", "insert"])
        // A read of a window says where to follow it from without a reset.
        let read = try fixture.connection.request("GET", "/sessions/polled?offset=3&limit=4")
        #expect(read.json["items"]?.array?.count == 4 && read.json["window"]?["total"]?.int == 29)
        let token = try #require(read.json["token"]?.stringValue)
        let quiet = try fixture.connection.request("GET", "/sessions/polled/changes?offset=3&limit=4&wait=0&since=\(token)")
        #expect(quiet.json["events"]?.array?.isEmpty == true, "\(quiet)")
    }

    /// A windowed stream of a session replaced by a sectioned one is reset to the sections in
    /// its window (a window of a sectioned session is a range of whole sections).
    @Test func aSessionReplacedBySectionsResetsItsWindowsToSections() throws {
        let fixture = try Fixture(.memory)
        let session = try Session(connection: fixture.connection, name: "becomes", rows: (0..<10).map { Row(id: $0, v: 0) })
        let follower = try WindowFollower(port: fixture.server.port, session: "becomes", format: "batch", query: "offset=1&limit=2")
        #expect(try follower.follow(until: 0, of: session.incarnation))
        let sections = #"{"sections":[{"id":"a","items":[{"id":1}]},{"id":"b","items":[]},{"id":"c","items":[{"id":2}]}]}"#
        #expect(try fixture.connection.request("PUT", "/sessions/becomes", json: sections).status == 200)
        let raw = try #require(try follower.client.next())
        let data = try JSONValue(parsing: raw.data)
        #expect(raw.event == "reset", "\(raw)")
        #expect(data["sections"]?.array?.compactMap { $0["id"]?.stringValue } == ["b", "c"], "\(raw)")
        #expect(data["window"]?["offset"]?.int == 1 && data["window"]?["count"]?.int == 2 && data["window"]?["total"]?.int == 3, "\(raw)")
    }

    /// Windows a session cannot have, or that ask too much, are refused naming the parameter.
    @Test func badWindowsAreRefusedNamingTheParameter() throws {
        let fixture = try Fixture(.memory, arguments: ["--max-window-rows", "100"])
        let connection = fixture.connection
        _ = try Session(connection: connection, name: "flat", rows: (0..<10).map { Row(id: $0, v: 0) }, maxRows: 100)
        #expect(try connection.request("PUT", "/sessions/shelves", json: #"{"sections":[{"id":"a","items":[{"id":1}]}]}"#).status == 201)
        #expect(try connection.request("PUT", "/sessions/repeats", json: #"{"items":[{"id":1},{"id":1}],"options":{"unique":false}}"#).status == 201)
        let cases: [(String, Int, String, String)] = [
            ("/sessions/flat?limit=101", 400, "invalid_parameter", "limit"),
            ("/sessions/flat?limit=0", 400, "invalid_parameter", "limit"),
            ("/sessions/flat?offset=-1&limit=5", 400, "invalid_parameter", "offset"),
            ("/sessions/flat?offset=5", 400, "invalid_parameter", "offset"),
            ("/sessions/flat?offset=1&after=3&limit=5", 400, "invalid_parameter", "after"),
            ("/sessions/flat?after=3&before=4&limit=5", 400, "invalid_parameter", "before"),
            ("/sessions/flat?after=3&limit=5&overscan=x", 400, "invalid_parameter", "overscan"),
            ("/sessions/flat?after=%7B%7D&limit=5", 400, "invalid_parameter", "after"),
            ("/sessions/repeats?after=1&limit=5", 400, "invalid_parameter", "after"),
            ("/sessions/flat/events?limit=500", 400, "invalid_parameter", "limit"),
            ("/sessions/flat/changes?before=3&offset=1&limit=5", 400, "invalid_parameter", "before"),
            ("/sessions/flat/events?offset=1&limit=5&rows=some", 400, "invalid_parameter", "rows"),
        ]
        for (path, status, code, parameter) in cases {
            let reply = try connection.request("GET", path)
            #expect(reply.status == status && reply.json["error"]?["code"]?.stringValue == code, "\(path): \(reply)")
            #expect(reply.json["error"]?["parameter"]?.stringValue == parameter, "\(path): \(reply)")
        }
        for path in ["/sessions/flat?after=77&limit=5", "/sessions/flat/events?before=%22x%22&limit=5", "/sessions/shelves?after=b&limit=5"] {
            let reply = try connection.request("GET", path)
            #expect(reply.status == 409 && reply.json["error"]?["code"]?.stringValue == "anchor_not_found", "\(path): \(reply)")
        }
        // Offset windows of a non-unique session are fine; past the end they are empty.
        #expect(try connection.request("GET", "/sessions/repeats?offset=1&limit=5").json["items"]?.array?.count == 1)
        #expect(try connection.request("GET", "/sessions/flat?offset=50&limit=5").json["window"]?["offset"]?.int == 10)
    }
}
