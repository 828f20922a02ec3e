import ByteJSON
import LiveDeltaRedis
import MicroHTTP
import PropertyBased
import RedisClient
import Synchronization
import TestSupport
import Testing

@testable import LiveDeltaService

/// Redis keeps a session's collection in parts, and a change rewrites the parts it touched: a
/// replica that reads the session afresh must find exactly the list the writer holds.
@Suite(.serialized) struct StoredPartsTests {
    /// A replica on `redis`, and the bytes of collection text each of its commits wrote.
    final class Replica: Sendable {
        let service: LiveDeltaService
        let writes = Writes()

        final class Writes: Sendable {
            let bytes = Mutex<[Int]>([])
        }

        var lastWrite: Int? { writes.bytes.withLock { $0.last } }

        init(_ redis: RedisProcess) throws {
            let configuration = try #require(RedisConfiguration(url: redis.url))
            let written = writes
            service = LiveDeltaService(
                sessions: SharedSessionStore.redis(RedisPool(configuration)) { event in
                    if case .storeWritten(let bytes) = event { written.bytes.withLock { $0.append(bytes) } }
                })
        }

        @discardableResult
        func send(_ method: String, _ path: String, _ body: String = "") -> (status: Int, body: [UInt8]) {
            let pieces = path.split(separator: "?", maxSplits: 1)
            let (route, query) = (String(pieces[0]), pieces.count > 1 ? pieces[1] : "")
            let pairs = query.split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                return (name: parts[0], value: parts.count > 1 ? parts[1] : "")
            }
            let response = service.handle(
                HTTPRequest(
                    method: method, path: route, fields: HeaderFields([("Content-Type", "application/json")]), query: pairs,
                    body: ByteBuffer(Array(body.utf8))))
            return (response.status, response.body)
        }
    }

    static func item(_ id: Int, _ tag: String) -> String { #"{"id":\#(id),"t":"\#(tag)","pad":"\#(String(repeating: "p", count: 70))"}"# }

    /// A replica with no copy of its own reads the session exactly as the writer holds it.
    static func expectSameRead(_ writer: Replica, _ redis: RedisProcess, _ id: String, _ context: String) throws {
        let held = writer.send("GET", "/sessions/\(id)")
        let read = try Replica(redis).send("GET", "/sessions/\(id)")
        #expect(held.status == 200 && read.status == 200 && held.body == read.body, "\(context)")
    }

    @Test func changesRewriteTheirPartsAndAnotherReplicaReadsTheSameList() async throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let writer = try Replica(redis)
        var ids = Array(0..<3_000)
        #expect(writer.send("PUT", "/sessions/s", #"{"items":[\#(ids.map { Self.item($0, "a") }.joined(separator: ","))]}"#).status == 201)
        try Self.expectSameRead(writer, redis, "s", "created")
        let whole = try #require(writer.lastWrite)
        #expect(whole > 3_000 * 90)
        // One changed item rewrites about one part, not the list.
        #expect(
            writer.send("POST", "/sessions/s/changes", #"{"operations":[{"op":"update","id":1500,"item":\#(Self.item(1500, "b"))}]}"#).status == 200)
        #expect(try #require(writer.lastWrite) <= 2 * PartPlanner.targetBytes)
        try Self.expectSameRead(writer, redis, "s", "one update")

        var next = 10_000
        await propertyCheck(count: 40, input: Gen.int(in: 0...1_000_000).array(of: 1...4)) { picks in
            var operations: [String] = []
            for pick in picks {
                let target = ids[pick % ids.count]
                let before = ids[(pick / 7) % ids.count]
                switch pick % 4 {
                case 0:
                    operations.append(#"{"op":"insert","id":\#(next),"before":\#(before),"item":\#(Self.item(next, "n"))}"#)
                    ids.insert(next, at: ids.firstIndex(of: before)!)
                    next += 1
                case 1 where ids.count > 1:
                    operations.append(#"{"op":"remove","id":\#(target)}"#)
                    ids.removeAll { $0 == target }
                case 2 where target != before:
                    operations.append(#"{"op":"move","id":\#(target),"before":\#(before)}"#)
                    ids.removeAll { $0 == target }
                    ids.insert(target, at: ids.firstIndex(of: before)!)
                default:
                    operations.append(#"{"op":"update","id":\#(target),"item":\#(Self.item(target, "u\(pick)"))}"#)
                }
            }
            let answer = writer.send("POST", "/sessions/s/changes", #"{"operations":[\#(operations.joined(separator: ","))]}"#)
            #expect(answer.status == 200, "\(operations): \(String(decoding: answer.body, as: UTF8.self))")
            if picks[0] % 5 == 0 {
                let items = (0..<(1 + picks[0] % 30)).map { _ in
                    defer { next += 1 }; return next
                }
                #expect(
                    writer.send("POST", "/sessions/s/append", #"{"items":[\#(items.map { Self.item($0, "e") }.joined(separator: ","))]}"#).status
                        == 200)
                ids += items
            }
            try Self.expectSameRead(writer, redis, "s", "\(operations)")
            // A keyset window on a replica with no copy: found by the ids' hashes kept beside
            // the parts, which every change keeps, and read from its parts alone.
            let anchor = ids[(picks[0] / 3) % ids.count]
            let reads = try redis.calls(of: "hgetall")
            for path in ["/sessions/s?after=\(anchor)&limit=20", "/sessions/s?before=\(anchor)&limit=7&overscan=3"] {
                let (held, read) = (writer.send("GET", path), try Replica(redis).send("GET", path))
                #expect(held.status == 200 && read.body == held.body, "\(path) after \(operations)")
            }
            #expect(try redis.calls(of: "hgetall") == reads, "a keyset window read the session whole")
        }
        let list = try JSONValue(parsing: String(decoding: writer.send("GET", "/sessions/s").body, as: UTF8.self))
        guard case .array(let items) = list["items"] else { throw Failure("no items") }
        let expected = try ids.map { try JSONValue(parsing: String($0)) }
        #expect(items.count == ids.count && items.map { $0["id"] } == expected, "the session's ids are not the ones written")
    }

    /// A sectioned window read by a replica with no copy comes from the parts that hold it and
    /// says the session's counts as the writer's own copy does; where the item count stored
    /// beside the parts is not the manifest's (left by a server that wrote none), the session is
    /// read whole, and the answer is the same.
    @Test func aSectionedWindowFromItsPartsAnswersAsTheWholeSession() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let writer = try Replica(redis)
        let sections = (0..<600).map { section in
            #"{"id":"s\#(section)","items":[\#((0..<3).map { Self.item(section * 3 + $0, "a") }.joined(separator: ","))]}"#
        }
        #expect(writer.send("PUT", "/sessions/w", #"{"sections":[\#(sections.joined(separator: ","))]}"#).status == 201)
        let inserted = #"{"id":"t","items":[\#(Self.item(9_000, "b")),\#(Self.item(9_001, "b"))]}"#
        let change = #"{"operations":[{"op":"remove","id":4},{"op":"insertSection","id":"t","before":"s2","section":\#(inserted)}]}"#
        #expect(writer.send("POST", "/sessions/w/changes", change).status == 200)
        let path = "/sessions/w?offset=400&limit=30"
        let held = writer.send("GET", path)
        #expect(held.status == 200 && String(decoding: held.body, as: UTF8.self).contains(#""count":1801,"sectionCount":601"#))
        func wholeReads() throws -> Int { try redis.calls(of: "hgetall") }
        let before = try wholeReads()
        #expect(try Replica(redis).send("GET", path).body == held.body)
        #expect(try wholeReads() == before, "a window of parts read the session whole")
        _ = try RedisPool(try #require(RedisConfiguration(url: redis.url))).run([["HSET", "livedelta:{w}", "n", "7:stale"]])
        #expect(try Replica(redis).send("GET", path).body == held.body)
        #expect(try wholeReads() == before + 1, "a count not the manifest's was taken")
    }

    /// A keyset window read by a replica with no copy finds the part that holds its anchor by
    /// the ids' hashes kept beside the parts, and reads that part and the window's alone: the
    /// answer is the writer's, refusals too. A part stored without its ids' hashes (by an
    /// earlier LiveDelta) has the session read whole, and the answer is the same.
    @Test func keysetWindowsFromTheirPartsAnswerAsTheWholeSession() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let writer = try Replica(redis)
        // Hundreds of parts: their lists are searched over more than one read.
        #expect(writer.send("PUT", "/sessions/k", #"{"items":[\#((0..<50_000).map { Self.item($0, "a") }.joined(separator: ","))]}"#).status == 201)
        let change =
            #"{"operations":[{"op":"remove","id":10},{"op":"insert","id":"x","before":3000,"item":{"id":"x"}},{"op":"move","id":5,"before":2000}]}"#
        #expect(writer.send("POST", "/sessions/k/changes", change).status == 200)
        let sections = (0..<800).map { section in
            #"{"id":"s\#(section)","items":[\#((0..<3).map { Self.item(section * 3 + $0, "a") }.joined(separator: ","))]}"#
        }
        #expect(writer.send("PUT", "/sessions/t", #"{"sections":[\#(sections.joined(separator: ","))]}"#).status == 201)
        #expect(writer.send("PUT", "/sessions/r", #"{"items":[1,1,2],"options":{"unique":false}}"#).status == 201)
        let paths = [
            "/sessions/k?after=0&limit=30", "/sessions/k?after=x&limit=30&overscan=5", "/sessions/k?before=x&limit=30",
            "/sessions/k?before=5&limit=50&overscan=2", "/sessions/k?after=49999&limit=10", "/sessions/k?before=0&limit=10",
            "/sessions/k?after=47000&limit=40&overscan=1",
            #"/sessions/k?after="x"&limit=3"#, "/sessions/k?after=10&limit=5", "/sessions/k?after=123456&limit=5",
            "/sessions/t?after=s400&limit=20", "/sessions/t?before=s799&limit=20&overscan=4", "/sessions/t?after=s9999&limit=2",
            "/sessions/r?after=1&limit=2",
        ]
        let held = paths.map { writer.send("GET", $0) }
        #expect(held.map(\.status) == [200, 200, 200, 200, 200, 200, 200, 200, 409, 409, 200, 200, 409, 400])
        let before = try redis.calls(of: "hgetall")
        for (path, answer) in zip(paths, held) {
            let read = try Replica(redis).send("GET", path)
            #expect(read.status == answer.status && read.body == answer.body, "\(path): \(String(decoding: read.body, as: UTF8.self))")
        }
        // An anchor found in no part may be there spelled otherwise: those three (gone, never
        // there, and in no section) were read whole, each by a replica with no copy.
        #expect(try redis.calls(of: "hgetall") == before + 3, "a keyset window read the session whole")
        // A replica keeps the lists it read: searching again reads none (two reads of lists
        // fewer), and after a commit elsewhere only the rewritten part's list (one read).
        let warm = try Replica(redis)
        func hmgets(_ path: String) throws -> Int {
            let before = try redis.calls(of: "hmget")
            #expect(warm.send("GET", path).body == writer.send("GET", path).body, "\(path)")
            return try redis.calls(of: "hmget") - before
        }
        let pool = RedisPool(try #require(RedisConfiguration(url: redis.url)))
        let fields = try pool.run([["HKEYS", "livedelta:{k}"]])[0].array?.compactMap { $0.bytes.map { String(decoding: $0, as: UTF8.self) } } ?? []
        let lists = fields.filter { $0.hasPrefix("h") }
        // The reads of lists a search takes (a read takes up to 512).
        let listReads = (lists.count + 511) / 512
        #expect(lists.count == fields.filter { $0.hasPrefix("p") }.count && listReads > 1)
        let first = try hmgets(paths[6])
        #expect(try hmgets(paths[6]) == first - listReads)
        #expect(writer.send("POST", "/sessions/k/changes", #"{"operations":[{"op":"remove","id":48000}]}"#).status == 200)
        #expect(try hmgets(paths[6]) == first - listReads + 1)
        // A part before the anchor's without its ids' hashes: the session is read whole.
        let manifest = try pool.run([["HGET", "livedelta:{k}", "m"]])[0].bytes.map { String(decoding: $0, as: UTF8.self) } ?? ""
        let firstPart = String(manifest.prefix { $0 != ":" })
        _ = try pool.run([["HDEL", "livedelta:{k}", .text("h" + firstPart)]])
        #expect(try Replica(redis).send("GET", paths[1]).body == writer.send("GET", paths[1]).body)
        #expect(try redis.calls(of: "hgetall") == before + 4, "a part without its ids' hashes was taken as holding none")
    }

    @Test func aSessionStoredWholeByAnEarlierVersionIsReadAndThenStoredInParts() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let pool = RedisPool(try #require(RedisConfiguration(url: redis.url)))
        let items = (0..<500).map { Self.item($0, "old") }.joined(separator: ",")
        _ = try pool.run([["HSET", "livedelta:{legacy}", "v", "3", "g", "x1", "o", "{}", "d", .text("[\(items)]")]])
        let writer = try Replica(redis)
        let before = writer.send("GET", "/sessions/legacy")
        #expect(before.status == 200 && String(decoding: before.body, as: UTF8.self).contains(#""version":3"#))
        #expect(writer.send("POST", "/sessions/legacy/changes", #"{"operations":[{"op":"remove","id":7}]}"#).status == 200)
        let fields =
            try pool.run([["HKEYS", "livedelta:{legacy}"]])[0].array?.compactMap { $0.bytes.map { String(decoding: $0, as: UTF8.self) } } ?? []
        #expect(fields.contains("m") && !fields.contains("d"), "\(fields)")
        try Self.expectSameRead(writer, redis, "legacy", "after its first change")
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
