import Foundation
import Testing

@testable import LiveDeltaService

/// The memory ledger of `Idempotency-Key`s: answers kept and found by key and fingerprint, each
/// tenant within its share (its own oldest go), all within the whole (the largest tenant gives
/// way), keys gone after the retention time.
@Suite struct IdempotencyLedgerTests {
    static func answer(_ size: Int) -> RecordedAnswer { RecordedAnswer(status: 200, headers: [], body: Array(repeating: 0x61, count: size)) }
    let first = Fingerprint(high: 1, low: 2)
    let other = Fingerprint(high: 3, low: 4)

    @Test func aKeyIsClaimedOnceAnsweredThenReplayedAndOtherRequestsAreRefused() throws {
        let ledger = InMemoryIdempotencyLedger()
        #expect(try ledger.claim(tenant: "t", key: "k", session: nil, fingerprint: first) == .claimed(nil))
        #expect(try ledger.claim(tenant: "t", key: "k", session: nil, fingerprint: first) == .running)
        #expect(try ledger.claim(tenant: "t", key: "k", session: nil, fingerprint: other) == .reused)
        ledger.record(tenant: "t", key: "k", session: nil, fingerprint: first, answer: Self.answer(10))
        #expect(try ledger.claim(tenant: "t", key: "k", session: nil, fingerprint: first) == .answered(Self.answer(10)))
        // Another tenant's key of the same name is another key.
        #expect(try ledger.claim(tenant: "u", key: "k", session: nil, fingerprint: other) == .claimed(nil))
        // A released key is free again.
        ledger.release(tenant: "u", key: "k", session: nil, fingerprint: other, hold: nil)
        #expect(try ledger.claim(tenant: "u", key: "k", session: nil, fingerprint: first) == .claimed(nil))
    }

    @Test func aTenantPastItsShareLosesItsOwnOldestKeysAndNoOneElses() throws {
        var limits = InMemoryIdempotencyLedger.Limits()
        limits.maxBytesPerTenant = 10_000
        limits.maxBytes = 1 << 30
        let ledger = InMemoryIdempotencyLedger(limits: limits)
        _ = try ledger.claim(tenant: "quiet", key: "mine", session: nil, fingerprint: first)
        ledger.record(tenant: "quiet", key: "mine", session: nil, fingerprint: first, answer: Self.answer(1_000))
        for index in 0..<1_000 {
            _ = try ledger.claim(tenant: "loud", key: "k\(index)", session: nil, fingerprint: first)
            ledger.record(tenant: "loud", key: "k\(index)", session: nil, fingerprint: first, answer: Self.answer(1_000))
        }
        #expect(try ledger.claim(tenant: "quiet", key: "mine", session: nil, fingerprint: first) == .answered(Self.answer(1_000)))
        #expect(try ledger.claim(tenant: "loud", key: "k999", session: nil, fingerprint: first) == .answered(Self.answer(1_000)))
        #expect(try ledger.claim(tenant: "loud", key: "k0", session: nil, fingerprint: other) == .claimed(nil), "the oldest went")
        #expect(ledger.bytes <= 10_000 + 2_000)
    }

    @Test func pastTheWholeBoundTheLargestTenantGivesWay() throws {
        var limits = InMemoryIdempotencyLedger.Limits()
        limits.maxBytesPerTenant = 100_000
        limits.maxBytes = 120_000
        let ledger = InMemoryIdempotencyLedger(limits: limits)
        for tenant in ["a", "b"] {
            for index in 0..<(tenant == "a" ? 90 : 30) {
                _ = try ledger.claim(tenant: tenant, key: "k\(index)", session: nil, fingerprint: first)
                ledger.record(tenant: tenant, key: "k\(index)", session: nil, fingerprint: first, answer: Self.answer(1_000))
            }
        }
        #expect(ledger.bytes <= 120_000)
        // b stayed within its share: all its keys are kept; a, the largest, lost its oldest.
        for index in 0..<30 {
            #expect(try ledger.claim(tenant: "b", key: "k\(index)", session: nil, fingerprint: first) == .answered(Self.answer(1_000)))
        }
        #expect(try ledger.claim(tenant: "a", key: "k0", session: nil, fingerprint: other) == .claimed(nil))
    }

    @Test func keysGoAfterTheRetentionTime() throws {
        var limits = InMemoryIdempotencyLedger.Limits()
        limits.retention = .milliseconds(50)
        let ledger = InMemoryIdempotencyLedger(limits: limits)
        _ = try ledger.claim(tenant: "t", key: "k", session: nil, fingerprint: first)
        ledger.record(tenant: "t", key: "k", session: nil, fingerprint: first, answer: Self.answer(10))
        Thread.sleep(forTimeInterval: 0.1)
        #expect(try ledger.claim(tenant: "t", key: "k", session: nil, fingerprint: other) == .claimed(nil))
        #expect(ledger.count == 1)
    }

    @Test func refusedWritesLeaveNothingBehind() throws {
        let ledger = InMemoryIdempotencyLedger()
        // Every key let go, one tenant keeping nothing else: the tenant goes whole.
        for index in 0..<5_000 {
            #expect(try ledger.claim(tenant: "t", key: "gone-\(index)", session: nil, fingerprint: first) == .claimed(nil))
            ledger.release(tenant: "t", key: "gone-\(index)", session: nil, fingerprint: first, hold: nil)
        }
        #expect(ledger.count == 0 && ledger.bytes == 0 && ledger.places == 0)
        // Beside a kept key, the released keys' places are dropped once they are most of them.
        _ = try ledger.claim(tenant: "t", key: "kept", session: nil, fingerprint: first)
        ledger.record(tenant: "t", key: "kept", session: nil, fingerprint: first, answer: Self.answer(10))
        for index in 0..<100_000 {
            _ = try ledger.claim(tenant: "t", key: "refused-\(index)", session: nil, fingerprint: first)
            ledger.release(tenant: "t", key: "refused-\(index)", session: nil, fingerprint: first, hold: nil)
        }
        #expect(ledger.count == 1)
        #expect(ledger.places <= 2_100, "places kept: \(ledger.places)")
        #expect(try ledger.claim(tenant: "t", key: "kept", session: nil, fingerprint: first) == .answered(Self.answer(10)))
    }

    @Test func headerValuesAreReadAsStructuredStringsOrBare() throws {
        #expect(try IdempotentWrites.key("\"abc\"") == "abc")
        #expect(try IdempotentWrites.key("abc") == "abc")
        #expect(try IdempotentWrites.key(#""a\"b\\c""#) == #"a"b\c"#)
        #expect(try IdempotentWrites.key("  spaced  ") == "spaced")
        for bad in ["", "\"\"", "\"open", #""a\x""#, String(repeating: "x", count: 256), "tab\there"] {
            #expect(throws: APIError.self, "\(bad)") { try IdempotentWrites.key(bad) }
        }
    }
}
