import LiveDeltaService
import MicroHTTP
import Synchronization
import Testing

/// A clock the test moves by hand (nanoseconds).
final class ManualClock: Sendable {
    let now = Atomic<UInt64>(0)
    var read: @Sendable () -> UInt64 { { [self] in now.load(ordering: .relaxed) } }
    func set(seconds: Double) { now.store(UInt64(seconds * 1e9), ordering: .relaxed) }
}

func collection(_ json: String) throws -> JSONCollection {
    try CollectionDocument.read(ByteBuffer(Array(json.utf8)))
}

@Suite struct SessionStoreTests {
    func store(maxSessions: Int = 10, idleSeconds: Int = 60, clock: ManualClock) -> InMemorySessionStore {
        var limits = InMemorySessionStore.Limits()
        limits.maxSessions = maxSessions
        limits.idleTimeout = .seconds(idleSeconds)
        return InMemorySessionStore(limits: limits, clock: clock.read)
    }

    @Test func aLastUseLaterThanTheClockReadIsFreshNotExpired() throws {
        // Another thread may mark a session used after this one read the clock.
        let clock = ManualClock()
        let sessions = store(clock: clock)
        clock.set(seconds: 1_000)
        _ = try sessions.put(id: "s", options: DiffOptions(), collection: try collection("[1]"))
        clock.set(seconds: 999)
        #expect(try sessions.snapshot(id: "s").version == 0)
    }

    @Test func aSessionUnusedForLongerThanTheTimeoutIsGone() throws {
        let clock = ManualClock()
        let sessions = store(idleSeconds: 60, clock: clock)
        _ = try sessions.put(id: "s", options: DiffOptions(), collection: try collection("[1]"))
        clock.set(seconds: 59)
        #expect(try sessions.snapshot(id: "s").version == 0)
        clock.set(seconds: 120)
        #expect(throws: SessionError.self) { try sessions.snapshot(id: "s") }
        #expect(sessions.statistics == SessionStatistics(open: 0, evicted: 0, expired: 1))
    }

    @Test func theLeastRecentlyUsedIdleSessionMakesRoom() throws {
        let clock = ManualClock()
        let sessions = store(maxSessions: 2, clock: clock)
        for (second, id) in ["a", "b"].enumerated() {
            clock.set(seconds: Double(second))
            _ = try sessions.put(id: id, options: DiffOptions(), collection: try collection("[]"))
        }
        clock.set(seconds: 5)
        _ = try sessions.snapshot(id: "a")
        clock.set(seconds: 6)
        _ = try sessions.put(id: "c", options: DiffOptions(), collection: try collection("[]"))
        #expect(throws: SessionError.self) { try sessions.snapshot(id: "b") }
        #expect(try sessions.snapshot(id: "a").version == 0 && sessions.statistics.evicted == 1)
    }
}

@Suite struct ItemLayoutTests {
    /// Sessions hold 1.5 bytes or less per byte of JSON only while an item costs 40 bytes.
    @Test func anItemTakesFortyBytes() {
        #expect(MemoryLayout<JSONItem>.stride == 40)
    }
}
