import LiveDeltaService
import MicroHTTP
import PropertyBased
import Testing

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// The memory store bounds the bytes its sessions hold (the bodies their items point into),
/// not only their count: one item may come in a body of any size.
@Suite struct SessionBytesTests {
    func store(maxBytes: Int, maxSessions: Int = 100) -> InMemorySessionStore {
        var limits = InMemorySessionStore.Limits()
        limits.maxBytes = maxBytes
        limits.maxSessions = maxSessions
        return InMemorySessionStore(limits: limits)
    }

    /// What a session counts for bodies of `bytes` in all holding `items` items.
    func footprint(_ bytes: Int, items: Int, bodies: Int = 1) -> Int {
        bytes + bodies * SessionFootprint.bytesPerBody + items * SessionFootprint.bytesPerItem
    }

    /// A flat collection of `ids`, its body padded with spaces to `bytes` in all.
    func padded(_ ids: [Int], to bytes: Int) throws -> JSONCollection {
        let json = "[" + ids.map(String.init).joined(separator: ",") + "]"
        return try collection(json + String(repeating: " ", count: max(0, bytes - json.utf8.count)))
    }

    @Test func theCountFollowsPutsUpdatesAppendsAndDeletes() throws {
        let sessions = store(maxBytes: 1 << 20)
        _ = try sessions.put(id: "a", options: DiffOptions(), collection: try padded([1], to: 1_000))
        _ = try sessions.put(id: "b", options: DiffOptions(), collection: try padded([1], to: 2_000))
        #expect(sessions.heldBytes == footprint(1_000, items: 1) + footprint(2_000, items: 1))
        // An update holds its own body in place of the old one.
        _ = try sessions.update(id: "a", to: try padded([1, 2], to: 500), readWith: DiffOptions(), condition: .any, commit: true)
        #expect(sessions.heldBytes == footprint(500, items: 2) + footprint(2_000, items: 1))
        // An append holds its body beside the ones before.
        _ = try sessions.append(id: "a", try padded([3], to: 700), readWith: DiffOptions(), condition: .any)
        let afterAppend = footprint(1_200, items: 3, bodies: 2) + footprint(2_000, items: 1)
        #expect(sessions.heldBytes == afterAppend)
        // A refused change holds nothing more.
        #expect(throws: SessionError.self) {
            try sessions.update(id: "a", to: try padded([9], to: 5_000), readWith: DiffOptions(), condition: .version(0), commit: true)
        }
        #expect(sessions.heldBytes == afterAppend)
        // A replaced session's bytes go with it.
        _ = try sessions.put(id: "b", options: DiffOptions(), collection: try padded([1], to: 100))
        #expect(sessions.heldBytes == footprint(1_200, items: 3, bodies: 2) + footprint(100, items: 1))
        try sessions.delete(id: "a", condition: .any)
        try sessions.delete(id: "b", condition: .any)
        #expect(sessions.heldBytes == 0)
    }

    @Test func bodiesPastTheBudgetEvictTheLeastRecentlyUsedIdleSessions() throws {
        // Room for three one-item sessions of 3,000 bytes, not four.
        let sessions = store(maxBytes: 11_000)
        for id in ["a", "b", "c", "d"] {
            _ = try sessions.put(id: id, options: DiffOptions(), collection: try padded([1], to: 3_000))
        }
        // "a" went to make room for "d".
        #expect(throws: SessionError.self) { try sessions.snapshot(id: "a") }
        #expect(sessions.heldBytes == 3 * footprint(3_000, items: 1) && sessions.statistics.evicted == 1)
        _ = try sessions.snapshot(id: "b")
        // Appends grow "d" past the budget: "c", now the least recently used, goes, then "b".
        _ = try sessions.append(id: "d", try padded([2], to: 2_000), readWith: DiffOptions(), condition: .any)
        #expect(throws: SessionError.self) { try sessions.snapshot(id: "c") }
        #expect(try sessions.snapshot(id: "b").version == 0)
        _ = try sessions.append(id: "d", try padded([3], to: 3_000), readWith: DiffOptions(), condition: .any)
        #expect(throws: SessionError.self) { try sessions.snapshot(id: "b") }
        #expect(sessions.heldBytes == footprint(8_000, items: 3, bodies: 3) && sessions.statistics.evicted == 3)
        #expect(try sessions.snapshot(id: "d").collection.itemCount == 3)
    }

    @Test func aSessionLargerThanTheWholeBudgetIsRefusedAndNothingChanges() throws {
        let sessions = store(maxBytes: 10_000)
        _ = try sessions.put(id: "a", options: DiffOptions(), collection: try padded([1], to: 4_000))
        _ = try sessions.put(id: "b", options: DiffOptions(), collection: try padded([1], to: 4_000))
        #expect {
            try sessions.put(id: "b", options: DiffOptions(), collection: try padded([2], to: 10_000))
        } throws: { error in
            guard case SessionError.tooLarge(10_000, let bytes) = error else { return false }
            return bytes == footprint(10_000, items: 1)
        }
        #expect {
            try sessions.append(id: "b", try padded([2], to: 6_000), readWith: DiffOptions(), condition: .any)
        } throws: { error in
            guard case SessionError.tooLarge(10_000, let bytes) = error else { return false }
            return bytes == footprint(10_000, items: 2, bodies: 2)
        }
        // Neither evicted "a" nor touched "b".
        #expect(try sessions.snapshot(id: "a").version == 0)
        #expect(try sessions.snapshot(id: "b").collection.itemCount == 1)
        #expect(sessions.heldBytes == 2 * footprint(4_000, items: 1) && sessions.statistics.evicted == 0)
    }

    /// A change refused for its version, its kind or the items it would leave is refused before
    /// room is made for it: the idle session that room would have cost stays.
    @Test func aChangeRefusedAnywayEvictsNobody() throws {
        var limits = InMemorySessionStore.Limits()
        limits.maxBytes = 10_000
        limits.maxItemsPerSession = 3
        let sessions = InMemorySessionStore(limits: limits)
        _ = try sessions.put(id: "a", options: DiffOptions(), collection: try padded([1], to: 4_000))
        _ = try sessions.put(id: "b", options: DiffOptions(), collection: try padded([1], to: 4_000))
        let needingRoom = try padded([1, 2], to: 6_000)
        #expect {
            try sessions.update(id: "b", to: needingRoom, readWith: DiffOptions(), condition: .version(7), commit: true)
        } throws: { error in
            guard case SessionError.versionMismatch(.version(7), 0?) = error else { return false }
            return true
        }
        #expect {
            try sessions.append(id: "b", needingRoom, readWith: DiffOptions(), condition: .version(7))
        } throws: { error in
            guard case SessionError.versionMismatch(.version(7), 0?) = error else { return false }
            return true
        }
        let sectioned = try collection("{\"sections\":[{\"id\":\"s\",\"items\":[1]}]" + String(repeating: " ", count: 5_000) + "}")
        #expect {
            try sessions.update(id: "b", to: sectioned, readWith: DiffOptions(), condition: .any, commit: true)
        } throws: { error in
            guard case SessionError.kindMismatch(sessionIsSectioned: false) = error else { return false }
            return true
        }
        #expect {
            try sessions.append(id: "b", try padded([2, 3, 4], to: 5_000), readWith: DiffOptions(), condition: .any)
        } throws: { error in
            guard case SessionError.tooManyItems(limit: 3, count: 4) = error else { return false }
            return true
        }
        #expect(try sessions.snapshot(id: "a").collection.itemCount == 1)
        #expect(sessions.statistics.evicted == 0 && sessions.heldBytes == 2 * footprint(4_000, items: 1))
        // A change that goes through takes the room.
        _ = try sessions.update(id: "b", to: needingRoom, readWith: DiffOptions(), condition: .version(0), commit: true)
        #expect(throws: SessionError.self) { try sessions.snapshot(id: "a") }
        #expect(sessions.statistics.evicted == 1)
    }

    /// Any sequence of changes, each refused or not: the count stays within the budget and
    /// comes back to 0. Each refusal is one its change may meet (a missing session, another
    /// version, no room), and what went through is there to read (what was deleted is not).
    @Test func theCountNeverDriftsOverAnySequenceOfChanges() async {
        // Each change is one number: its kind (5), session (4), body size (4,001) and version (3).
        await propertyCheck(count: 300, input: Gen.int(in: 0..<(5 * 4 * 4_001 * 3)).array(of: 1...40)) { changes in
            let sessions = store(maxBytes: 12_000, maxSessions: 3)
            let outcomes = StoreOutcomes()
            let ids = ["a", "b", "c", "d"]
            func exists(_ id: String) -> Bool { (try? sessions.snapshot(id: id)) != nil }
            for change in changes {
                let (kind, session, bytes, version) = (change % 5, change / 5 % 4, change / 20 % 4_001, change / 80_020)
                let id = ids[session]
                let body = try padded([bytes % 7, 7 + bytes % 5], to: bytes)
                let appended = try padded([100 + bytes], to: bytes)
                let went: Bool
                switch kind {
                case 0:
                    went = outcomes.run("put") { () throws(SessionError) in _ = try sessions.put(id: id, options: DiffOptions(), collection: body) }
                case 1:
                    went = outcomes.run("update") { () throws(SessionError) in
                        _ = try sessions.update(id: id, to: body, readWith: DiffOptions(), condition: .any, commit: true)
                    }
                case 2:
                    went = outcomes.run("update") { () throws(SessionError) in
                        _ = try sessions.update(id: id, to: body, readWith: DiffOptions(), condition: .version(UInt64(version)), commit: true)
                    }
                case 3:
                    went = outcomes.run("append") { () throws(SessionError) in
                        _ = try sessions.append(id: id, appended, readWith: DiffOptions(), condition: .any)
                    }
                default: went = outcomes.run("delete") { () throws(SessionError) in try sessions.delete(id: id, condition: .any) }
                }
                #expect(sessions.heldBytes <= 12_000)
                // A change that went through left the session there; a delete, gone.
                if went { #expect(exists(id) == (kind != 4)) }
            }
            #expect(outcomes.total == changes.count)
            // An append of an item the session holds already (the same body size twice) is a
            // duplicate; a put's or an update's two items never share an id.
            let expected: Set = [
                "put: storeFull", "put: bytesFull", "put: tooLarge", "update: notFound", "update: versionMismatch", "update: bytesFull",
                "update: tooLarge", "append: notFound", "append: bytesFull", "append: tooLarge", "append: duplicate", "delete: notFound",
            ]
            #expect(outcomes.refusals(except: expected) == [])
            for id in ids where exists(id) { try sessions.delete(id: id, condition: .any) }
            #expect(sessions.heldBytes == 0)
        }
    }

    /// Where sessions in use hold the whole budget, a change that needs room is refused (a
    /// 503 with `Retry-After` over HTTP) rather than evicting them. The store's events come
    /// while the session just put is still in use, so a put made from one finds it so.
    @Test func sessionsInUseAreNeverEvictedForRoom() throws {
        let box = NIOLockedValueBox<InMemorySessionStore?>(nil)
        let refusal = NIOLockedValueBox<SessionError?>(nil)
        var limits = InMemorySessionStore.Limits()
        limits.maxBytes = 10_000
        let big = try padded([2], to: 6_000)
        let store = InMemorySessionStore(limits: limits) { event in
            guard case .open(1) = event, let store = box.withLockedValue({ $0 }) else { return }
            box.withLockedValue { $0 = nil }  // once
            do throws(SessionError) {
                _ = try store.put(id: "b", options: DiffOptions(), collection: big)
            } catch {
                refusal.withLockedValue { $0 = error }
            }
        }
        box.withLockedValue { $0 = store }
        _ = try store.put(id: "a", options: DiffOptions(), collection: try padded([1], to: 5_000))
        guard case .bytesFull(10_000)? = refusal.withLockedValue({ $0 }) else {
            Issue.record("expected bytesFull, got \(String(describing: refusal.withLockedValue { $0 }))")
            return
        }
        // Once "a" is idle, it makes room.
        _ = try store.put(id: "b", options: DiffOptions(), collection: big)
        #expect(throws: SessionError.self) { try store.snapshot(id: "a") }
        #expect(store.heldBytes == footprint(6_000, items: 1))
    }
}
