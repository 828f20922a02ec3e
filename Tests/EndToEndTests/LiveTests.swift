import ByteJSON
import Dispatch
import Foundation
import LiveCollections
import Synchronization
import TestSupport
import Testing

/// Live sessions against the real binary: subscribers follow a session's versions exactly,
/// resume, reset when they must, and never hold up writers or each other.
@Suite struct LiveTests {
    /// A random list of things with ids below 40: moves, inserts, deletes and edits between
    /// any two of them.
    static func randomThings(_ generator: inout some RandomNumberGenerator) -> [Thing] {
        let ids = (0..<40).shuffled(using: &generator).prefix(Int.random(in: 5...30, using: &generator))
        return ids.map { Thing(id: $0, content: Int.random(in: 0...3, using: &generator)) }
    }

    static func body(_ things: [Thing]) -> String { "{\"items\":\(json(things))}" }

    /// 8 writers post 50 updates each to one session while 20 subscribers follow it: some in
    /// each format, some joining late, some reconnecting mid-stream with their last id. Each
    /// ends on the session's final list, every version once and in order.
    @Test(arguments: StoreKind.allCases) func subscribersFollowConcurrentWritersExactly(store: StoreKind) throws {
        // History enough for any follower's lag: resuming is what this test checks.
        let fixture = try Fixture(store, arguments: ["--live-history", "1000"])
        let port = fixture.server.port
        let server = fixture.server
        #expect(try fixture.connection.request("PUT", "/sessions/live", json: Self.body((0..<20).map { Thing(id: $0) })).status == 201)
        let formats = ["batch", "keyed", "jsonPatch", "batch&rows=changed"]
        let early = try (0..<12).map { try LiveFollower(port: port, session: "live", format: formats[$0 % 4]) }
        let written = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let writers = DispatchGroup()
        for writer in 0..<8 {
            DispatchQueue.global().async(group: writers) {
                var generator = SystemRandomNumberGenerator()
                do {
                    let connection = try server.connection()
                    for _ in 0..<50 {
                        let reply = try connection.request("POST", "/sessions/live/update", json: Self.body(Self.randomThings(&generator)))
                        if reply.status != 200 { failures.withLock { $0.append("writer \(writer): \(reply)") } }
                        written.add(1, ordering: .relaxed)
                    }
                } catch {
                    failures.withLock { $0.append("writer \(writer): \(error)") }
                }
            }
        }
        // Late joiners, once writing is under way.
        while written.load(ordering: .relaxed) < 100 { usleep(1_000) }
        let late = try (0..<8).map { try LiveFollower(port: port, session: "live", format: formats[$0 % 4]) }
        let followers = early + late
        let finalVersion = 400
        let outcomes = Mutex<[Int: Bool]>([:])
        DispatchQueue.concurrentPerform(iterations: followers.count) { index in
            let follower = followers[index]
            do {
                // A third of the early ones drop their connection part-way and resume.
                if index < 12 && index % 3 == 0 {
                    _ = try follower.follow(until: 60 + index)
                    try follower.reconnect()
                }
                let reached = try follower.follow(until: finalVersion)
                outcomes.withLock { $0[index] = reached }
            } catch {
                failures.withLock { $0.append("follower \(index): \(error)") }
            }
        }
        writers.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        // A connection of its own: the fixture's has sat idle while the followers read, and on
        // a loaded machine that may pass --header-timeout, which closes an idle connection.
        let final = try fixture.server.connection().request("GET", "/sessions/live")
        #expect(final.json["version"]?.int == finalVersion)
        let finalItems = final.json["items"]?.array ?? []
        for (index, follower) in followers.enumerated() {
            #expect(outcomes.withLock { $0[index] } == true, "follower \(index) did not reach the final version")
            #expect(follower.problems.isEmpty, "follower \(index) (\(follower.format)): \(follower.problems.prefix(3))")
            #expect(follower.items == finalItems, "follower \(index) (\(follower.format)) ends on another list")
            // One reset to start, then deltas only: the history holds every missed version.
            #expect(follower.resets == 1, "follower \(index) was reset \(follower.resets) times")
        }
    }

    /// An HTTP/1.0 client gets its stream unchunked, through the response's own buffer (a
    /// chunked one goes through the connection's memory): a reset of 3,000 items, many times
    /// that buffer, arrives whole.
    @Test func anHTTP10SubscriberGetsAWholeResetUnchunked() throws {
        let server = try ServerProcess()
        let sent = (0..<3_000).map { Thing(id: $0, content: $0) }
        #expect(try server.connection().request("PUT", "/sessions/old", json: Self.body(sent)).status == 201)
        let connection = try server.connection()
        try connection.send(raw: Array("GET /sessions/old/events HTTP/1.0\r\n\r\n".utf8))
        let (status, headers, rest) = try connection.readHead()
        #expect(status == 200 && !headers.contains { $0.name.lowercased() == "transfer-encoding" }, "\(headers)")
        var body = rest
        func reset() -> [UInt8]? {
            let text = String(decoding: body, as: UTF8.self)
            guard let start = text.range(of: "event: reset\n"), let end = text[start.upperBound...].range(of: "\n\n") else { return nil }
            let line = text[start.upperBound..<end.lowerBound].split(separator: "\n").first { $0.hasPrefix("data: ") }
            return line.map { Array($0.dropFirst(6).utf8) }
        }
        while reset() == nil { body += try connection.receive() }
        let data = try #require(reset())
        let event = try data.withUnsafeBufferPointer { try JSONValue(parsing: $0) }
        #expect(things(event["items"]) == sent)
    }

    @Test func aTokenFromAnEarlierLifeOfTheSessionGetsAReset() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/again", json: Self.body([Thing(id: 1)])).status == 201)
        let first = try LiveFollower(port: server.port, session: "again", format: "keyed")
        #expect(try first.follow(until: 0))
        let token = try #require(first.client.lastEventID)
        #expect(try connection.request("DELETE", "/sessions/again").status == 204)
        #expect(try first.client.next()?.event == "end")
        #expect(try connection.request("PUT", "/sessions/again", json: Self.body([Thing(id: 2), Thing(id: 3)])).status == 201)
        let resumed = try LiveFollower(port: server.port, session: "again", format: "keyed", lastEventID: token)
        let event = try #require(try resumed.client.next())
        // Same id, same version 0, another life: the whole new list, never a delta on the old.
        #expect(event.event == "reset" && event.id != token)
        resumed.apply(event)
        #expect(resumed.items.map { $0["id"]?.int } == [2, 3])
    }

    @Test func aTokenOlderThanTheHistoryGetsAResetAndOneWithinItGetsEveryMissedVersion() throws {
        let server = try ServerProcess(arguments: ["--live-history", "5"])
        let connection = try server.connection()
        var generator = SystemRandomNumberGenerator()
        #expect(try connection.request("PUT", "/sessions/old", json: Self.body(Self.randomThings(&generator))).status == 201)
        let watcher = try LiveFollower(port: server.port, session: "old", format: "keyed")
        #expect(try watcher.follow(until: 0))
        let start = try #require(watcher.client.lastEventID)
        for _ in 0..<3 { _ = try connection.request("POST", "/sessions/old/update", json: Self.body(Self.randomThings(&generator))) }
        #expect(try watcher.follow(until: 3))
        let recent = try #require(watcher.client.lastEventID)
        for _ in 0..<3 { _ = try connection.request("POST", "/sessions/old/update", json: Self.body(Self.randomThings(&generator))) }
        #expect(try watcher.follow(until: 6))
        // Versions 4 to 6 are kept: a client at 3 gets them as deltas.
        let resumed = try EventStreamClient(port: server.port, path: "/sessions/old/events?format=keyed&since=\(recent)")
        let caughtUp = try (0..<3).map { _ in try #require(try resumed.next()) }
        #expect(caughtUp.map(\.event) == ["delta", "delta", "delta"] && caughtUp.last?.id == watcher.client.lastEventID)
        // Version 0 is gone from the history: a reset to 6, not a partial catch-up.
        let stale = try EventStreamClient(port: server.port, path: "/sessions/old/events?format=keyed&since=\(start)")
        let reset = try #require(try stale.next())
        #expect(reset.event == "reset" && reset.id == watcher.client.lastEventID)
        // A token the server cannot read is a reset too, never silence.
        let garbled = try EventStreamClient(port: server.port, path: "/sessions/old/events", headers: [("Last-Event-ID", "nonsense")])
        #expect(try garbled.next()?.event == "reset")
    }

    /// A version committed without a delta (over `dataCountAnimationThreshold`) carries nothing a
    /// subscriber could apply: in every format it arrives as a reset to that version, the
    /// collection whole, so that no client shows the new version on the old list.
    @Test(arguments: ["keyed", "batch", "sequential", "jsonPatch"]) func aVersionWithoutADeltaReachesSubscribersAsAReset(format: String) throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        let options = #","options":{"dataCountAnimationThreshold":3}"#
        #expect(try connection.request("PUT", "/sessions/big", json: #"{"items":[1,2,3]"# + options + "}").status == 201)
        let stream = try EventStreamClient(port: server.port, path: "/sessions/big/events?format=\(format)")
        #expect(try stream.next()?.event == "reset")
        let answer = try connection.request("POST", "/sessions/big/update", json: #"{"items":[4,3,2,1]}"#)
        #expect(answer.json["animation"]?.stringValue == "reloadSections" && answer.json["delta"] == nil)
        let event = try #require(try stream.next())
        #expect(event.event == "reset" && event.id?.hasSuffix(".1") == true)
        let data = try JSONValue(parsing: event.data)
        #expect(data["version"]?.int == 1 && data["items"]?.array?.compactMap(\.int) == [4, 3, 2, 1])
        // Back under the threshold on both sides, deltas again.
        _ = try connection.request("POST", "/sessions/big/update", json: #"{"items":[3,2,1]}"#)
        #expect(try stream.next()?.event == "reset")
        _ = try connection.request("POST", "/sessions/big/update", json: #"{"items":[1,2]}"#)
        #expect(try stream.next()?.event == "delta")
    }

    @Test(arguments: ["keyed", "batch", "jsonPatch"]) func coalescedCatchUpIsOneDeltaToTheSameList(format: String) throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        var generator = SystemRandomNumberGenerator()
        #expect(try connection.request("PUT", "/sessions/co", json: Self.body(Self.randomThings(&generator))).status == 201)
        let away = try LiveFollower(port: server.port, session: "co", format: format)
        #expect(try away.follow(until: 0))
        let token = try #require(away.client.lastEventID)
        for _ in 0..<10 { _ = try connection.request("POST", "/sessions/co/update", json: Self.body(Self.randomThings(&generator))) }
        let back = try EventStreamClient(port: server.port, path: "/sessions/co/events?format=\(format)&catchUp=coalesce&since=\(token)")
        let event = try #require(try back.next())
        #expect(event.event == "delta")
        away.apply(event)
        let final = try connection.request("GET", "/sessions/co")
        #expect(away.problems.isEmpty, "\(away.problems)")
        #expect(away.version == 10 && away.items == (final.json["items"]?.array ?? []))
    }

    /// A subscriber that never reads is dropped once its buffer is full, while the writer and
    /// a reading subscriber go on.
    @Test func aSubscriberThatStopsReadingIsDroppedAndNobodyWaitsForIt() throws {
        let server = try ServerProcess(arguments: ["--subscriber-buffer-bytes", "65536"])
        let connection = try server.connection()
        let big = { (round: Int) in
            "{\"items\":["
                + (0..<200).map { "{\"id\":\($0),\"text\":\"\(String(repeating: "x", count: 200))\",\"round\":\(round)}" }.joined(separator: ",")
                + "]}"
        }
        #expect(try connection.request("PUT", "/sessions/slow", json: big(0)).status == 201)
        let stalled = try EventStreamClient(port: server.port, path: "/sessions/slow/events?format=batch", timeoutSeconds: 5)
        let reader = try LiveFollower(port: server.port, session: "slow", format: "batch")
        var slowest = 0.0
        for round in 1...300 {
            let started = Date()
            #expect(try connection.request("POST", "/sessions/slow/update", json: big(round)).status == 200)
            slowest = max(slowest, Date().timeIntervalSince(started))
            // In step with the reading subscriber, which so never falls behind however loaded the
            // machine (a pause between updates did, and it was dropped too): only the stalled
            // one fills its buffer.
            guard try reader.follow(until: round) else {
                Issue.record("the reading subscriber's stream ended at round \(round)")
                break
            }
        }
        #expect(reader.problems.isEmpty, "\(reader.problems)")
        // Each event carries ~42 KB; 300 of them are far more than the socket and 64 KiB hold.
        #expect(slowest < 2, "an update took \(slowest) s")
        var seen = 0
        while let event = try? stalled.next() {
            if event.event == "delta" { seen += 1 }
        }
        #expect(seen < 300, "the stalled subscriber was never dropped")
    }

    @Test func aLongPollAnswersAtOnceWhenThereIsNewsAndEmptyAtItsDeadline() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/poll", json: Self.body([Thing(id: 1)])).status == 201)
        let first = try connection.request("GET", "/sessions/poll/changes")
        #expect(first.status == 200 && first.json["events"]?.array?.first?["event"]?.stringValue == "reset")
        let next = try #require(first.json["next"]?.stringValue)
        let started = Date()
        let empty = try connection.request("GET", "/sessions/poll/changes?since=\(next)&wait=1")
        #expect(empty.json["events"]?.array?.isEmpty == true && empty.json["next"]?.stringValue == next)
        #expect(Date().timeIntervalSince(started) >= 0.9)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            _ = try? server.connection().request("POST", "/sessions/poll/update", json: Self.body([Thing(id: 2), Thing(id: 1)]))
        }
        let asked = Date()
        let news = try connection.request("GET", "/sessions/poll/changes?since=\(next)&wait=10&format=keyed")
        let events = news.json["events"]?.array ?? []
        #expect(events.count == 1 && events.first?["event"]?.stringValue == "delta")
        #expect(try applyKeyed(events.first?["data"]?["keyed"]?.array ?? [], to: [JSONValue(parsing: "{\"id\":1}")]).map { $0["id"]?.int } == [2, 1])
        // Answered by the news, not by the 10 s deadline (with room for a loaded machine).
        #expect(Date().timeIntervalSince(asked) < 9)
        let bad = try connection.request("GET", "/sessions/poll/changes?wait=forever")
        #expect(bad.status == 400 && bad.errorCode == "invalid_parameter")
    }

    @Test func streamsSayHowToReconnectSendHeartbeatsAndCountAgainstTheirLimits() throws {
        let server = try ServerProcess(arguments: ["--heartbeat-interval", "1", "--max-subscribers-per-session", "2"])
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/hb", json: Self.body([Thing(id: 1)])).status == 201)
        let one = try EventStreamClient(port: server.port, path: "/sessions/hb/events")
        #expect(one.header("Content-Type")?.hasPrefix("text/event-stream") == true)
        #expect(one.header("Cache-Control") == "no-store" && one.header("X-Accel-Buffering") == "no")
        let first = try #require(try one.next())
        #expect(first.event == "reset" && one.retry == 2_000)
        let two = try EventStreamClient(port: server.port, path: "/sessions/hb/events")
        let three = try EventStreamClient(port: server.port, path: "/sessions/hb/events")
        #expect(two.status == 200 && three.status == 503 && three.header("Retry-After") != nil)
        #expect(String(decoding: three.body, as: UTF8.self).contains("too_many_subscribers"))
        // Idle: comments come (every second here), and no event before them.
        #expect(try one.nextComment(), "an idle stream sent something other than a comment first")
        _ = try connection.request("POST", "/sessions/hb/update", json: Self.body([Thing(id: 1, content: 1)]))
        #expect(try one.next()?.event == "delta")
        #expect(one.comments >= 1)
        #expect(try connection.request("GET", "/sessions/nobody/events").status == 404)
        #expect(try connection.request("GET", "/sessions/hb/events?format=xml").errorCode == "invalid_parameter")
    }

    @Test func sigtermEndsStreamsWithAShutdownEventAndTheServerExitsAtOnce() throws {
        let server = try ServerProcess()
        #expect(try server.connection().request("PUT", "/sessions/bye", json: Self.body([Thing(id: 1)])).status == 201)
        let followers = try (0..<5).map { _ in try EventStreamClient(port: server.port, path: "/sessions/bye/events") }
        for follower in followers { #expect(try follower.next()?.event == "reset") }
        let started = Date()
        #expect(server.stop() == 0)
        #expect(Date().timeIntervalSince(started) < 5)
        for follower in followers {
            let event = try follower.next()
            #expect(event?.event == "shutdown")
            #expect(try follower.next() == nil)
        }
    }
}
