/// A feed's windowed subscribers' places side by side, in plain values: what a fan-out pass
/// reads and moves for each window. A commit outside thousands of windows is then a walk of
/// one array, not a visit to thousands of subscriber objects (each a few cache misses).
///
/// A slot is ahead of its subscriber where a pass moved the window without a word
/// (`passQuietly`); the subscriber is brought up to it (`release`) before anything else reads
/// its place. Kept under the feed's lock, as subscribers' places are.
struct WindowSlots {
    /// One window's place, 64 bytes (one cache line): a pass over thousands reads each cold,
    /// and at 128 bytes it read two lines a window. So the window is kept as the plain values
    /// that place it (`window` puts them together), the life as an index into `lives`, and
    /// the rows' limits in 32 bits (the API caps them at `--max-window-rows`, at most 100,000).
    struct Slot {
        /// The last entry of the log it has been given (by sequence).
        var delivered: UInt64
        /// Its version in its life.
        var version: UInt64
        /// When its total started to be pending (monotonic nanoseconds); `Int64.min` for none.
        private var pendingStart: Int64
        var lastTotal: Int64
        /// A keyset window's anchor, or an offset window's offset (whose anchor is always 0).
        private var place: Int
        private var total: Int
        private var limit: UInt32
        private var overscan: UInt32
        /// Its life: an index into the slots' `lives`.
        var life: UInt32
        private var kind: UInt8
        /// The window, version or pending total moved here and not yet in the subscriber.
        var ahead = false

        init(window: PlacedWindow, life: UInt32, version: UInt64, delivered: UInt64, pendingSince: Int64?, lastTotal: Int64) {
            self.delivered = delivered
            self.version = version
            pendingStart = .min
            self.lastTotal = lastTotal
            (place, total, limit, overscan, kind) = (0, 0, 0, 0, 0)
            self.life = life
            self.window = window
            self.pendingSince = pendingSince
        }

        var window: PlacedWindow {
            get {
                let shape: WindowShape.Kind =
                    switch kind {
                    case 0: .offset(place)
                    case 1: .after
                    default: .before
                    }
                return PlacedWindow(
                    WindowShape(kind: shape, limit: Int(limit), overscan: Int(overscan)), anchor: kind == 0 ? 0 : place, total: total)
            }
            set {
                switch newValue.shape.kind {
                case .offset(let offset): (kind, place) = (0, offset)
                case .after: (kind, place) = (1, newValue.anchor)
                case .before: (kind, place) = (2, newValue.anchor)
                }
                total = newValue.total
                limit = UInt32(clamping: newValue.shape.limit)
                overscan = UInt32(clamping: newValue.shape.overscan)
            }
        }

        var pendingSince: Int64? {
            get { pendingStart == .min ? nil : pendingStart }
            set { pendingStart = newValue ?? .min }
        }

        /// When its pending total may be sent; `.max` where none is pending.
        var totalDue: Int64 { WindowState.totalDue(pendingSince: pendingSince, lastTotal: lastTotal) }
    }

    /// Read and moved in place by the fan-out pass.
    var slots: [Slot] = []
    /// The subscriber of each slot, at the same index.
    private(set) var owners: [LiveSubscriber] = []
    private var index: [ObjectIdentifier: Int] = [:]
    /// The lives (incarnations) of the slots' sessions, which a slot names by index. Lives no
    /// slot is in any more are dropped when the list grows past `compactAt`.
    private(set) var lives: [String] = []
    private var compactAt = 8

    /// Takes a windowed subscriber joining, from its place (just set).
    mutating func add(_ subscriber: LiveSubscriber) {
        guard let slot = slot(of: subscriber) else { return }
        index[ObjectIdentifier(subscriber)] = slots.count
        slots.append(slot)
        owners.append(subscriber)
    }

    /// Takes a subscriber's place again after a pass set it (where it is still here).
    mutating func refresh(_ subscriber: LiveSubscriber) {
        guard let at = index[ObjectIdentifier(subscriber)], let slot = slot(of: subscriber) else { return }
        slots[at] = slot
    }

    private mutating func slot(of subscriber: LiveSubscriber) -> Slot? {
        guard let placed = subscriber.placed, let position = subscriber.position else { return nil }
        return Slot(
            window: placed.window, life: life(position.incarnation), version: position.version, delivered: subscriber.delivered,
            pendingSince: placed.pendingSince, lastTotal: placed.lastTotal)
    }

    /// The index of a life in `lives`, added where it is new.
    mutating func life(_ incarnation: String) -> UInt32 {
        if let at = lives.firstIndex(of: incarnation) { return UInt32(at) }
        if lives.count >= compactAt {
            // Only the lives slots are in are kept, renumbered.
            var kept: [String] = []
            var renumbered: [UInt32: UInt32] = [:]
            for at in slots.indices {
                let old = slots[at].life
                if let new = renumbered[old] {
                    slots[at].life = new
                    continue
                }
                let new = UInt32(kept.count)
                kept.append(lives[Int(old)])
                renumbered[old] = new
                slots[at].life = new
            }
            lives = kept
            compactAt = max(8, 2 * kept.count)
        }
        lives.append(incarnation)
        return UInt32(lives.count - 1)
    }

    /// The index of a life in `lives`; nil where no slot is in it.
    func knownLife(_ incarnation: String) -> UInt32? {
        lives.firstIndex(of: incarnation).map { UInt32($0) }
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
        lives = []
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
