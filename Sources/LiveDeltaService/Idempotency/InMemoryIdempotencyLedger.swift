import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// Keys and first answers in this process, for the memory store (whose sessions go with the
/// process too). Each is kept for the retention time; each tenant's within its own memory
/// bound (its oldest keys go first when it needs room), and all together within a global one
/// (the tenant holding the most gives up its oldest), so one tenant's writes never push out
/// another's keys while it stays within its share.
package final class InMemoryIdempotencyLedger: IdempotencyLedger {
    package struct Limits: Sendable {
        /// How long a key and its answer are kept.
        package var retention: Duration = .seconds(86_400)
        /// Bytes of answers one tenant's keys may keep.
        package var maxBytesPerTenant = 16 << 20
        /// Bytes of answers all keys may keep.
        package var maxBytes = 256 << 20

        package init() {}
    }

    private struct Entry {
        var fingerprint: Fingerprint
        /// nil while the request runs.
        var answer: RecordedAnswer?
        var expires: ContinuousClock.Instant
        var bytes: Int
    }

    private struct Tenant {
        var entries: [String: Entry] = [:]
        /// Keys in the order they were claimed (so in the order they expire), with stale ones
        /// (released, or claimed again since) skipped when reached.
        var order: [(key: String, expires: ContinuousClock.Instant)] = []
        var head = 0
        var bytes = 0
        /// Places in `order` past `head` whose key was released: dropped all at once when they
        /// are most of it, so that refused writes, each claiming a new key and letting it go,
        /// leave nothing behind for the retention time.
        var stale = 0
    }

    private struct State {
        var tenants: [String: Tenant] = [:]
        var bytes = 0
    }

    private let limits: Limits
    // A pthread lock (not the standard library's Mutex), which ThreadSanitizer sees.
    private let state = NIOLockedValueBox(State())

    package init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Keys kept now, all tenants together (for tests and metrics).
    package var count: Int { state.withLockedValue { $0.tenants.values.reduce(0) { $0 + $1.entries.count } } }

    /// Bytes kept now, all tenants together.
    package var bytes: Int { state.withLockedValue { $0.bytes } }

    /// Places in the tenants' claim orders kept now, stale ones included (for tests).
    package var places: Int { state.withLockedValue { $0.tenants.values.reduce(0) { $0 + $1.order.count - $1.head } } }

    package func claim(tenant: String, key: String, session: String?, fingerprint: Fingerprint) throws(APIError) -> IdempotencyClaim {
        let now = ContinuousClock.now
        return state.withLockedValue { state in
            var ledger = state.tenants.removeValue(forKey: tenant) ?? Tenant()
            defer { state.tenants[tenant] = ledger }
            Self.expire(&ledger, now: now, total: &state.bytes)
            if let entry = ledger.entries[key] {
                guard entry.fingerprint == fingerprint else { return .reused }
                return entry.answer.map { .answered($0) } ?? .running
            }
            let entry = Entry(fingerprint: fingerprint, answer: nil, expires: now + limits.retention, bytes: key.utf8.count + 96)
            ledger.entries[key] = entry
            ledger.order.append((key, entry.expires))
            ledger.bytes += entry.bytes
            state.bytes += entry.bytes
            return .claimed(nil)
        }
    }

    package func record(tenant: String, key: String, session: String?, fingerprint: Fingerprint, answer: RecordedAnswer) {
        state.withLockedValue { state in
            guard var ledger = state.tenants.removeValue(forKey: tenant) else { return }
            if var entry = ledger.entries[key], entry.fingerprint == fingerprint, entry.answer == nil {
                entry.answer = answer
                ledger.bytes += answer.bytes
                state.bytes += answer.bytes
                entry.bytes += answer.bytes
                ledger.entries[key] = entry
            }
            // Room within the tenant's share: its own oldest go.
            while ledger.bytes > limits.maxBytesPerTenant, Self.dropOldest(&ledger, total: &state.bytes) {}
            state.tenants[tenant] = ledger
            // Room within the whole: the tenant holding the most gives up its oldest.
            while state.bytes > limits.maxBytes {
                guard let largest = state.tenants.max(by: { $0.value.bytes < $1.value.bytes })?.key,
                    var holder = state.tenants.removeValue(forKey: largest)
                else { break }
                let dropped = Self.dropOldest(&holder, total: &state.bytes)
                if !holder.entries.isEmpty { state.tenants[largest] = holder }
                if !dropped { break }
            }
        }
    }

    package func release(tenant: String, key: String, session: String?, fingerprint: Fingerprint, hold: IdempotencyHold?) {
        state.withLockedValue { state in
            guard var ledger = state.tenants.removeValue(forKey: tenant) else { return }
            guard let entry = ledger.entries[key], entry.fingerprint == fingerprint, entry.answer == nil else {
                state.tenants[tenant] = ledger
                return
            }
            ledger.entries[key] = nil
            ledger.bytes -= entry.bytes
            state.bytes -= entry.bytes
            // A tenant that keeps no key keeps nothing at all.
            guard !ledger.entries.isEmpty else { return }
            ledger.stale += 1
            if ledger.stale > 1024 && ledger.stale * 2 > ledger.order.count - ledger.head {
                ledger.order = ledger.order[ledger.head...].filter { ledger.entries[$0.key]?.expires == $0.expires }
                ledger.head = 0
                ledger.stale = 0
            }
            state.tenants[tenant] = ledger
        }
    }

    private static func expire(_ ledger: inout Tenant, now: ContinuousClock.Instant, total: inout Int) {
        while ledger.head < ledger.order.count, ledger.order[ledger.head].expires <= now {
            let (key, expires) = ledger.order[ledger.head]
            advance(&ledger)
            _ = forget(key, claimedUntil: expires, in: &ledger, total: &total)
        }
    }

    /// Forgets `key` where it is still the claim made with `expires` (not released, not claimed
    /// again since); whether it did.
    private static func forget(_ key: String, claimedUntil expires: ContinuousClock.Instant, in ledger: inout Tenant, total: inout Int) -> Bool {
        guard let entry = ledger.entries[key], entry.expires == expires else {
            ledger.stale = max(0, ledger.stale - 1)
            return false
        }
        ledger.entries[key] = nil
        ledger.bytes -= entry.bytes
        total -= entry.bytes
        return true
    }

    /// Moves past the oldest place in the order; now and then drops the places passed, so that
    /// the order does not grow with every key ever claimed.
    private static func advance(_ ledger: inout Tenant) {
        ledger.head += 1
        if ledger.head > 1024 && ledger.head * 2 > ledger.order.count {
            ledger.order.removeFirst(ledger.head)
            ledger.head = 0
        }
    }

    /// Drops the tenant's oldest key still kept; false where it keeps none.
    @discardableResult
    private static func dropOldest(_ ledger: inout Tenant, total: inout Int) -> Bool {
        while ledger.head < ledger.order.count {
            let (key, expires) = ledger.order[ledger.head]
            advance(&ledger)
            if forget(key, claimedUntil: expires, in: &ledger, total: &total) { return true }
        }
        return false
    }
}
