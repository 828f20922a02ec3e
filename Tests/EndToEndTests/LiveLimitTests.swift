import ByteJSON
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What one client can take from the others on the live routes, against the real binary:
/// stream slots given back when a client closes, a client's streams counted and their starts
/// rate-limited, unread long polls sharing one rendering, large sessions followed whole, and
/// every way a session ends told to its subscribers.
@Suite struct LiveLimitTests {
    static func items(_ count: Int, padding: Int = 0) -> String {
        let pad = String(repeating: "x", count: padding)
        return "{\"items\":[" + (0..<count).map { "{\"id\":\($0),\"text\":\"\(pad)\"}" }.joined(separator: ",") + "]}"
    }

    /// A client that opens a stream, reads its reset and closes it, a thousand times over,
    /// keeps at most a few slots for a moment: each is given back when the client closes, not
    /// at the next heartbeat. With 50 slots, every cycle is served, and so is a subscriber of
    /// another session after them.
    @Test func closedStreamsGiveBackTheirSlotsAtOnce() throws {
        let server = try ServerProcess(arguments: ["--max-subscribers", "50", "--stream-opens-per-second", "0", "--heartbeat-interval", "60"])
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/a", json: Self.items(3)).status == 201)
        #expect(try connection.request("PUT", "/sessions/b", json: Self.items(3)).status == 201)
        var statuses: [Int: Int] = [:]
        for _ in 0..<1_000 {
            let stream = try EventStreamClient(port: server.port, path: "/sessions/a/events", source: "127.0.0.2")
            statuses[stream.status, default: 0] += 1
            if stream.status == 200 { #expect(try stream.next()?.event == "reset") }
            stream.connection.shutDown()
        }
        #expect(statuses == [200: 1_000])
        // The gauge says so too, within its second.
        var subscribers: Double?
        _ = try eventually {
            subscribers = sample(try connection.request("GET", "/metrics").text, "livedelta_live_subscribers")
            return subscribers == 0
        }
        #expect(subscribers == 0)
        let other = try EventStreamClient(port: server.port, path: "/sessions/b/events", timeoutSeconds: 5, source: "127.0.0.3")
        #expect(other.status == 200)
        #expect(try other.next()?.event == "reset")
        _ = try eventually {
            subscribers = sample(try connection.request("GET", "/metrics").text, "livedelta_live_subscribers")
            return subscribers == 1
        }
        #expect(subscribers == 1)
    }

    /// Starting streams in a loop is slowed to the client's rate (429 naming the flag), while
    /// another client is served at once; and a client's open streams count against its
    /// connections.
    @Test func aClientStartingStreamsInALoopIsSlowedAndOthersAreServed() throws {
        let server = try ServerProcess(arguments: ["--stream-opens-per-second", "5", "--max-connections-per-client", "8"])
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/a", json: Self.items(3)).status == 201)
        var statuses: [Int: Int] = [:]
        var refusal = ""
        for _ in 0..<1_000 {
            let stream = try EventStreamClient(port: server.port, path: "/sessions/a/events", source: "127.0.0.2")
            statuses[stream.status, default: 0] += 1
            if stream.status == 429 { refusal = String(decoding: stream.body, as: UTF8.self) }
            stream.connection.shutDown()
        }
        // Three seconds' worth at once, then five a second for as long as the loop ran.
        #expect((statuses[200] ?? 0) >= 15 && (statuses[200] ?? 0) < 200, "\(statuses)")
        #expect(statuses[200, default: 0] + statuses[429, default: 0] == 1_000)
        #expect(refusal.contains("too_many_stream_opens") && refusal.contains("--stream-opens-per-second"))
        let other = try EventStreamClient(port: server.port, path: "/sessions/a/events", timeoutSeconds: 5, source: "127.0.0.3")
        #expect(other.status == 200)
        #expect(try other.next()?.event == "reset")

        // Eight streams held open by one address: its ninth connection is refused.
        let held = try (0..<8).map { _ in try EventStreamClient(port: server.port, path: "/sessions/a/events", source: "127.0.0.4") }
        #expect(held.allSatisfy { $0.status == 200 })
        let ninth = try HTTPConnection(port: server.port, timeoutSeconds: 5, source: "127.0.0.4")
        #expect(try ninth.request("GET", "/health").status == 429)
    }

    /// Resident memory of a process, in bytes.
    static func residentBytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1_024
    }

    /// 100 long polls of a 12 MB session whose clients never read share one rendering of its
    /// reset: the server's memory grows by a few copies of the session, not by 100.
    @Test func unreadLongPollsShareOneRendering() throws {
        // One address opens them all, faster than the default rate allows.
        let server = try ServerProcess(arguments: ["--stream-opens-per-second", "0"])
        let connection = try server.connection()
        let body = Self.items(100_000, padding: 100)
        #expect(body.utf8.count > 11_000_000)
        #expect(try connection.request("PUT", "/sessions/big", json: body).status == 201)
        // One poll read whole renders the reset once.
        let first = try connection.request("GET", "/sessions/big/changes")
        #expect(first.status == 200 && first.body.count > body.utf8.count)
        let before = Self.residentBytes(server.process.processIdentifier)
        var polls: [HTTPConnection] = []
        for _ in 0..<100 {
            let poll = try HTTPConnection(port: server.port, timeoutSeconds: 5)
            var small: Int32 = 4_096
            setsockopt(poll.socket, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            try poll.send(raw: Array("GET /sessions/big/changes HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            polls.append(poll)
        }
        // Every poll is being answered (its head comes; reading it waits for it), none refused.
        for poll in polls {
            let (status, _, _) = try poll.readHead()
            #expect(status == 200)
        }
        let after = Self.residentBytes(server.process.processIdentifier)
        // Unshared, the answers alone would take 100 × 13 MB.
        #expect(after - before < 200 << 20, "resident memory grew by \((after - before) >> 20) MiB")
        // The server still answers everyone else.
        #expect(try server.connection().request("GET", "/sessions/big").status == 200)
        withExtendedLifetime(polls) {}
    }

    /// A session larger than a subscriber's buffer (4 MiB by default) is followed to its whole
    /// reset, then its deltas.
    @Test func aLargeSessionIsFollowedToItsWholeReset() throws {
        let server = try ServerProcess()
        let connection = try server.connection()
        // Room for one more item below --max-session-items.
        let body = Self.items(99_999, padding: 100)
        #expect(try connection.request("PUT", "/sessions/big", json: body).status == 201)
        let stream = try EventStreamClient(port: server.port, path: "/sessions/big/events", timeoutSeconds: 20)
        #expect(stream.status == 200)
        let reset = try #require(try stream.next())
        #expect(reset.event == "reset" && reset.data.utf8.count > 11_000_000)
        let state = try JSONValue(parsing: reset.data)
        #expect(state["items"]?.array?.count == 99_999)
        #expect(try connection.request("POST", "/sessions/big/append", json: "{\"items\":[{\"id\":-1}]}").status == 200)
        #expect(try stream.next()?.event == "delta")
    }

    /// A poll whose answer would pass what the server holds for clients that have not read
    /// is refused at once, naming the flag; never headers and silence.
    @Test func whatDoesNotFitInTheUnsentBudgetIsRefusedNamingTheFlag() throws {
        let server = try ServerProcess(arguments: ["--max-unsent-bytes", "\(4 << 20)"])
        let connection = try server.connection()
        #expect(try connection.request("PUT", "/sessions/big", json: Self.items(50_000, padding: 100)).status == 201)
        let refused = try connection.request("GET", "/sessions/big/changes")
        #expect(refused.status == 503 && refused.errorCode == "too_many_subscribers")
        #expect(refused.text.contains("--max-unsent-bytes") && refused.header("Retry-After") != nil)
        #expect(try connection.request("PUT", "/sessions/small", json: Self.items(3)).status == 201)
        #expect(try connection.request("GET", "/sessions/small/changes").status == 200)
    }

    /// Every way a session goes ends its streams and its long polls with an `end` naming why:
    /// deleted, expired while followed, and evicted to make room for another.
    @Test func everyWayASessionEndsIsToldToItsSubscribers() throws {
        let server = try ServerProcess(arguments: ["--max-sessions", "3", "--session-idle-timeout", "2"])
        let connection = try server.connection()
        for id in ["deleted", "evicted", "expired"] {
            #expect(try connection.request("PUT", "/sessions/\(id)", json: Self.items(2)).status == 201)
        }
        let deleted = try EventStreamClient(port: server.port, path: "/sessions/deleted/events")
        let evicted = try EventStreamClient(port: server.port, path: "/sessions/evicted/events")
        let expired = try EventStreamClient(port: server.port, path: "/sessions/expired/events", timeoutSeconds: 20)
        for stream in [deleted, evicted, expired] { #expect(try stream.next()?.event == "reset") }
        let poll = try HTTPConnection(port: server.port, timeoutSeconds: 10)
        let next = try poll.request("GET", "/sessions/deleted/changes?wait=0").json["next"]?.stringValue ?? ""
        try poll.send(raw: Array("GET /sessions/deleted/changes?since=\(next)&wait=30 HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        usleep(200_000)

        #expect(try connection.request("DELETE", "/sessions/deleted").status == 204)
        let deletedEnd = try #require(try deleted.next())
        #expect(deletedEnd.event == "end" && deletedEnd.data.contains("\"deleted\""))
        let polled = try poll.readReply()
        #expect(polled.json["events"]?.array?.first?["data"]?["reason"]?.stringValue == "deleted", "\(polled.text)")

        // Creating sessions is the usual way one is evicted: the least recently used goes.
        usleep(100_000)
        _ = try connection.request("GET", "/sessions/expired")
        #expect(try connection.request("PUT", "/sessions/new-1", json: Self.items(2)).status == 201)
        #expect(try connection.request("PUT", "/sessions/new-2", json: Self.items(2)).status == 201)
        let evictedEnd = try #require(try evicted.next())
        #expect(evictedEnd.event == "end" && evictedEnd.data.contains("\"evicted\""))
        #expect(try connection.request("GET", "/sessions/evicted").status == 404)

        // Nobody touches "expired" now: it ends while followed (the hub looks about every 10 s).
        let expiredEnd = try #require(try expired.next())
        #expect(expiredEnd.event == "end" && expiredEnd.data.contains("\"expired\""))
    }
}
