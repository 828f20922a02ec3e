import ByteJSON
import Dispatch
import Foundation
import LiveCollections
import Synchronization
import TestSupport
import Testing

/// Every figure an answer gives comes from one state of the session, under concurrent
/// updates and appends from many clients; limits hold; shutdown completes or cuts responses.
@Suite struct ConcurrencyTests {
    /// What one client sent and got back.
    struct Answer {
        var version: Int
        var baseVersion: Int
        var oldCount: Int
        var newCount: Int
        var delta: IndexDelta
        /// The items the update posted, or the items appended.
        var sent: [Thing]
        var appended: Bool
    }

    /// 8 clients update and append to one session at once; afterwards the answers, taken in
    /// version order, chain without gaps, each count is the size of the state at its base
    /// version (and after it), and each delta replays that state into the next.
    @Test func everyAnswersCountsAgreeWithTheStateAtItsBaseVersion() throws {
        let server = try ServerProcess()
        let start = (0..<20).map { Thing(id: $0) }
        #expect(try server.connection().request("PUT", "/sessions/shared", json: "{\"items\":\(json(start))}").status == 201)
        let answers = Mutex<[Answer]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { client in
            do {
                let connection = try server.connection()
                for round in 0..<40 {
                    let appending = (client + round) % 3 == 0
                    let base = 1_000 * (client + 1) + round * 10
                    let sent =
                        appending
                        ? [Thing(id: base), Thing(id: base + 1)]
                        : (0..<(5 + (client * 7 + round) % 20)).map { Thing(id: ($0 * 3 + client + round) % 40, content: round % 3) }
                    let reply = try connection.request(
                        "POST", "/sessions/shared/\(appending ? "append" : "update")", json: "{\"items\":\(json(sent))}")
                    guard reply.status == 200, let version = reply.json["version"]?.int, let baseVersion = reply.json["baseVersion"]?.int,
                        let oldCount = reply.json["oldCount"]?.int, let newCount = reply.json["newCount"]?.int
                    else {
                        failures.withLock { $0.append("\(reply)") }
                        continue
                    }
                    let answer = Answer(
                        version: version, baseVersion: baseVersion, oldCount: oldCount, newCount: newCount,
                        delta: try indexDelta(reply.json["delta"]), sent: sent, appended: appending)
                    answers.withLock { $0.append(answer) }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        let ordered = answers.withLock { $0 }.sorted { $0.version < $1.version }
        #expect(ordered.count == 320 && ordered.map(\.version) == Array(1...320))
        var state = start
        for answer in ordered {
            #expect(answer.baseVersion == answer.version - 1)
            let next = answer.appended ? state + answer.sent : answer.sent
            #expect(answer.oldCount == state.count && answer.newCount == next.count, "version \(answer.version)")
            #expect((try? answer.delta.replay(old: state, new: next)) == next, "version \(answer.version)")
            state = next
        }
        let final = try server.connection().request("GET", "/sessions/shared")
        #expect(final.json["version"]?.int == 320 && things(final.json["items"]) == state)
    }

    /// The item limit is checked in the same step as the append: concurrent appends never
    /// pass it, and exactly as many fit as it allows.
    @Test func concurrentAppendsNeverPassTheItemLimit() throws {
        let server = try ServerProcess(arguments: ["--max-session-items", "1000"])
        #expect(try server.connection().request("PUT", "/sessions/full", json: "{\"items\":\(json((0..<900).map { Thing(id: $0) }))}").status == 201)
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { client in
            let items = (0..<60).map { Thing(id: 10_000 * (client + 1) + $0) }
            let status = (try? server.connection().request("POST", "/sessions/full/append", json: "{\"items\":\(json(items))}").status) ?? -1
            statuses.withLock { $0.append(status) }
        }
        let count = try server.connection().request("GET", "/sessions/full").json["count"]?.int
        #expect(count == 960 && statuses.withLock { $0.sorted() } == [200] + Array(repeating: 413, count: 7))
    }

    /// Occurrences are numbered inside the step: concurrent appends of repeated ids to a
    /// non-unique sectioned session are all accepted, and number on from one another.
    @Test func concurrentNonUniqueAppendsAreNeverRefused() throws {
        let server = try ServerProcess()
        let created = try server.connection().request(
            "PUT", "/sessions/repeats", json: #"{"options":{"unique":false},"sections":[{"id":"s0","items":[1,1,2]}]}"#)
        #expect(created.status == 201)
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { client in
            guard let connection = try? server.connection() else { return }
            for round in 0..<10 {
                let body = "{\"sections\":[{\"id\":\"c\(client)-\(round)\",\"items\":[1,2,1,\(client)]}]}"
                let status = (try? connection.request("POST", "/sessions/repeats/append", json: body).status) ?? -1
                statuses.withLock { $0.append(status) }
            }
        }
        #expect(statuses.withLock { $0 }.allSatisfy { $0 == 200 }, "\(statuses.withLock { Set($0) })")
        let shown = try server.connection().request("GET", "/sessions/repeats")
        #expect(shown.json["version"]?.int == 80 && shown.json["count"]?.int == 3 + 80 * 4)
    }

    /// Large diffs in flight at SIGTERM, read by ordinary clients, all complete with their
    /// whole bodies, and the process exits 0.
    @Test func largeDiffsInFlightAtSIGTERMCompleteWithWholeBodies() throws {
        let server = try ServerProcess(arguments: ["--shutdown-grace", "60"])
        let old = "[" + (0..<100_000).map { "{\"id\":\($0),\"v\":\($0 % 7)}" }.joined(separator: ",") + "]"
        let new = "[" + (0..<100_000).reversed().map { "{\"id\":\($0),\"v\":\($0 % 5)}" }.joined(separator: ",") + "]"
        let body = Array("{\"old\":\(old),\"new\":\(new),\"options\":{\"dataCountAnimationThreshold\":1000000,\"includeDeletedItems\":true}}".utf8)
        let connections = try (0..<4).map { _ in try server.connection() }
        for connection in connections {
            try connection.send(
                raw: Array("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        }
        usleep(100_000)
        kill(server.process.processIdentifier, SIGTERM)
        for connection in connections {
            let reply = try connection.readReply()
            #expect(reply.status == 200 && reply.body.count == Int(reply.header("Content-Length") ?? "") && reply.json["newCount"]?.int == 100_000)
        }
        #expect(server.stop(signal: 0, timeout: 60) == 0)
        #expect(server.logShows("drained=true"))
    }

    /// A computation longer than the grace period does not hold the process: it exits at
    /// grace + a little, with the status that says requests were cut, and the client sees
    /// an error rather than an answer.
    @Test func aComputationLongerThanTheGraceDoesNotHoldTheProcess() throws {
        let server = try ServerProcess(arguments: ["--shutdown-grace", "0"])
        // Within --max-items-per-request (2,000,000 in all), and long enough to compute in a
        // release build too (`make check`): each item moves (a permutation by a multiplier
        // prime to the count), so the minimal moves and the answer take about half a second.
        let count = 999_999
        let old = (0..<count).map(String.init).joined(separator: ",")
        let new = (0..<count).map { String($0 * 7_919 % count) }.joined(separator: ",")
        let options = #""options":{"dataCountAnimationThreshold":10000000,"deltaCountAnimationThreshold":10000000}"#
        let body = Array("{\"old\":[\(old)],\"new\":[\(new),-1],\(options)}".utf8)
        let connection = try server.connection()
        try connection.send(
            raw: Array("POST /diff HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        usleep(200_000)
        let signalled = Date()
        let status = server.stop(signal: SIGTERM, timeout: 20)
        let took = Date().timeIntervalSince(signalled)
        #expect(status == 75 && server.logShows("still_computing=1"), "\(server.log)")
        #expect(took < 2, "\(took) s")
        #expect(throws: ClientError.self) { try connection.readReply() }
    }
}
