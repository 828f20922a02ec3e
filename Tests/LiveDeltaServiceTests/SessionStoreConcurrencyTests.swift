import ByteJSON
import Dispatch
import LiveDeltaService
import MicroHTTP
import Testing

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// The store under concurrent use, in process (so that `make test` runs it under
/// ThreadSanitizer too): answers agree with the state they started from, limits hold, and
/// callbacks may call back into the store.
@Suite struct SessionStoreConcurrencyTests {
    static func post(_ service: LiveDeltaService, _ path: String, _ body: String) -> (status: Int, json: JSONValue) {
        let response = service.handle(
            HTTPRequest(method: "POST", path: path, headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
        return (response.status, (try? JSONValue(parsing: String(decoding: response.body, as: UTF8.self))) ?? .null)
    }

    static func int(_ value: JSONValue?) -> Int? {
        if case .number(let number)? = value { return Int(number.description) }
        return nil
    }

    @Test func concurrentUpdatesAndAppendsReportTheCountsOfTheirBaseVersion() {
        let service = LiveDeltaService()
        _ = Self.post(service, "/sessions/s/update", "{\"items\":[1,2,3]}")
        // version -> (base, oldCount, newCount, count appended or nil for an update's new count)
        let answers = NIOLockedValueBox<[Int: (base: Int, old: Int, new: Int, appended: Int?)]>([:])
        DispatchQueue.concurrentPerform(iterations: 8) { client in
            for round in 0..<30 {
                let appending = (client + round) % 2 == 0
                let items =
                    appending
                    ? "[\(10_000 * (client + 1) + round)]" : "[" + (0..<(round % 9)).map { String($0 * 7 + client) }.joined(separator: ",") + "]"
                let (status, json) = Self.post(service, "/sessions/s/\(appending ? "append" : "update")", "{\"items\":\(items)}")
                guard status == 200, let version = Self.int(json["version"]), let base = Self.int(json["baseVersion"]),
                    let old = Self.int(json["oldCount"]), let new = Self.int(json["newCount"])
                else {
                    Issue.record("status \(status): \(json)")
                    continue
                }
                answers.withLockedValue { $0[version] = (base, old, new, appending ? 1 : nil) }
            }
        }
        let all = answers.withLockedValue { $0 }
        #expect(all.keys.sorted() == Array(2...241))
        var count = 3
        for version in 2...241 {
            guard let answer = all[version] else { continue }
            #expect(answer.base == version - 1 && answer.old == count, "version \(version)")
            count = answer.appended.map { count + $0 } ?? answer.new
            #expect(answer.new == count)
        }
    }

    @Test func eventsMayCallBackIntoTheStore() throws {
        let box = NIOLockedValueBox<InMemorySessionStore?>(nil)
        var limits = InMemorySessionStore.Limits()
        limits.maxSessions = 2
        let store = InMemorySessionStore(limits: limits, events: { _ in _ = box.withLockedValue { $0 }?.statistics })
        box.withLockedValue { $0 = store }
        for id in ["a", "b", "c", "d"] {
            _ = try store.put(id: id, options: DiffOptions(), collection: CollectionDocument.read(ByteBuffer(Array("[1]".utf8))))
        }
        #expect(store.statistics == SessionStatistics(open: 2, evicted: 2, expired: 0))
        box.withLockedValue { $0 = nil }
    }

    /// Puts, updates, appends and deletes from eight threads on four sessions, under a budget
    /// that keeps evicting: the store never counts more than the budget, and counts nothing
    /// once every session is gone (sessions replaced or evicted while a change ran on them
    /// count nothing either). Every kind of change goes through many times; the only
    /// refusals are for a session another thread deleted or evicted, for room that sessions in
    /// use hold, and for an item another thread appended first.
    @Test func theByteCountHoldsUnderConcurrentChanges() throws {
        var limits = InMemorySessionStore.Limits()
        limits.maxBytes = 20_000
        let store = InMemorySessionStore(limits: limits)
        let over = NIOLockedValueBox(0)
        let outcomes = StoreOutcomes()
        DispatchQueue.concurrentPerform(iterations: 8) { client in
            for round in 0..<300 {
                let id = "s\((client + round) % 4)"
                let size = 500 + (client * 977 + round * 131) % 4_000
                let json = "[\(round),\(client + 1_000)]"
                guard let body = try? CollectionDocument.read(ByteBuffer(Array((json + String(repeating: " ", count: size)).utf8))) else {
                    Issue.record("unreadable body")
                    return
                }
                switch round % 5 {
                case 0: outcomes.run("put") { () throws(SessionError) in _ = try store.put(id: id, options: DiffOptions(), collection: body) }
                case 1, 2:
                    outcomes.run("update") { () throws(SessionError) in
                        _ = try store.update(id: id, to: body, readWith: DiffOptions(), condition: .any, commit: true)
                    }
                case 3:
                    outcomes.run("append") { () throws(SessionError) in
                        _ = try store.append(id: id, body, readWith: DiffOptions(), condition: .any)
                    }
                default: outcomes.run("delete") { () throws(SessionError) in try store.delete(id: id, condition: .any) }
                }
                if store.heldBytes > store.limits.maxBytes { over.withLockedValue { $0 += 1 } }
            }
        }
        #expect(over.withLockedValue { $0 } == 0)
        #expect(outcomes.total == 8 * 300)
        for operation in ["put", "update", "append", "delete"] { #expect(outcomes.succeeded(operation) > 0, "\(operation)") }
        // Clients 4 apart append the same round's number to the same session: where both reach
        // it before anything replaces it, the second is a duplicate.
        let expected: Set = [
            "update: notFound", "append: notFound", "delete: notFound", "put: bytesFull", "update: bytesFull", "append: bytesFull",
            "append: duplicate",
        ]
        #expect(outcomes.refusals(except: expected) == [])
        for session in 0..<4 { outcomes.run("cleanup") { () throws(SessionError) in try store.delete(id: "s\(session)", condition: .any) } }
        #expect(store.heldBytes == 0)
        #expect(store.statistics.open == 0)
    }
}
