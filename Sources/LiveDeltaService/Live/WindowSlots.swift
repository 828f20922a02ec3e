/// A feed's windowed subscribers' places side by side, in plain values: what a fan-out pass
/// reads and moves for each window. A commit outside thousands of windows is then a walk of
/// one array, not a visit to thousands of subscriber objects (each a few cache misses).
///
/// A slot is ahead of its subscriber where a pass moved the window without a word
/// (`passQuietly`); the subscriber is brought up to it (`release`) before anything else reads
/// its place. Kept under the feed's lock, as subscribers' places are.
struct WindowSlots {
    struct Slot {
        var window: PlacedWindow
        /// The subscriber's life, and its version in it.
        var incarnation: String
        var version: UInt64
        /// The last entry of the log it has been given (by sequence).
        var delivered: UInt64
        var pendingSince: Int64?
        var lastTotal: Int64
        /// When its pending total may be sent; `.max` where none is pending.
        var totalDue: Int64 { WindowState.totalDue(pendingSince: pendingSince, lastTotal: lastTotal) }
        /// The window, version or pending total moved here and not yet in the subscriber.
        var ahead = false
    }

    /// Read and moved in place by the fan-out pass.
    var slots: [Slot] = []
    /// The subscriber of each slot, at the same index.
    private(set) var owners: [LiveSubscriber] = []
    private var index: [ObjectIdentifier: Int] = [:]

    /// Takes a windowed subscriber joining, from its place (just set).
    mutating func add(_ subscriber: LiveSubscriber) {
        guard let slot = Self.slot(of: subscriber) else { return }
        index[ObjectIdentifier(subscriber)] = slots.count
        slots.append(slot)
        owners.append(subscriber)
    }

    /// Takes a subscriber's place again after a pass set it (where it is still here).
    mutating func refresh(_ subscriber: LiveSubscriber) {
        guard let at = index[ObjectIdentifier(subscriber)], let slot = Self.slot(of: subscriber) else { return }
        slots[at] = slot
    }

    private static func slot(of subscriber: LiveSubscriber) -> Slot? {
        guard let placed = subscriber.placed, let position = subscriber.position else { return nil }
        return Slot(
            window: placed.window, incarnation: position.incarnation, version: position.version, delivered: subscriber.delivered,
            pendingSince: placed.pendingSince, lastTotal: placed.lastTotal)
    }

    mutating func remove(_ subscriber: LiveSubscriber) {
        guard let at = index.removeValue(forKey: ObjectIdentifier(subscriber)) else { return }
        let last = slots.count - 1
        if at != last {
            slots[at] = slots[last]
            owners[at] = owners[last]
            index[ObjectIdentifier(owners[at])] = at
        }
        slots.removeLast()
        owners.removeLast()
    }

    mutating func removeAll() {
        slots = []
        owners = []
        index = [:]
    }

    /// Whether any window's pending total may be sent at `now`.
    func anyDue(_ now: Int64) -> Bool { slots.contains { now >= $0.totalDue } }

    /// Brings the subscriber at `at` up to its slot, for a pass that sends it something
    /// (`deliverWindow` reads its place), and marks `delivered`.
    mutating func release(_ at: Int, delivered: UInt64) -> LiveSubscriber {
        let subscriber = owners[at]
        if slots[at].ahead {
            subscriber.catchUp(to: slots[at].window, version: slots[at].version, pendingSince: slots[at].pendingSince)
            slots[at].ahead = false
        }
        slots[at].delivered = delivered
        subscriber.delivered = delivered
        return subscriber
    }
}
