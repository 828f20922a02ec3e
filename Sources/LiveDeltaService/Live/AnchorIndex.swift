import LiveCollections
import Synchronization

/// Finds a keyset window's anchor in a long list without reading the list each time: a list
/// asked about again and again (thousands of subscribers placing their windows in one version
/// of a million-item session) is given a table of its ids' positions, built once.
///
/// The tables are kept by the address and length of the list's storage, which a later list
/// may reuse, so a table is never trusted: a position it gives counts only where the item
/// there has the id asked for (ids name one item each), and anything else is asked of the
/// list, as without a table. A stale table costs a scan, never a wrong row.
enum AnchorIndex {
    /// Shorter lists are scanned: a scan of them costs less than a table's upkeep.
    static let shortest = 4_096
    /// Scans of one list before it is given a table: a table costs a few scans to build, and
    /// most versions of a busy session are asked about once or not at all.
    static let scansBeforeTable = 3
    /// Tables kept at once, at most.
    static let tablesKept = 4
    /// The bytes all tables kept may take (a table is 8 to 16 bytes an item): a list too long
    /// for a table within them (over 2^23 items) is scanned each time.
    static let tableBytes = 64 << 20

    /// The tables of the process's lists.
    static let shared = AnchorTables()

    /// The position of the element whose id is `key`'s, nil where there is none.
    static func position<Element: UniquelyIdentifiable>(of key: Element, in elements: [Element]) -> Int? {
        shared.position(of: key, in: elements)
    }
}

/// The tables `AnchorIndex` keeps, and the scans that lead to them.
final class AnchorTables: Sendable {
    private struct Key: Hashable {
        let address: UInt
        let count: Int
    }

    /// A list's table, built once by whichever caller locks it first: thousands of subscribers
    /// joining at once (a restart, a deploy) ask about one version together, and each one that
    /// came while a table was being built used to build one of its own (about 50 of a
    /// million-item list, 2.8 s of CPU, where one takes 50 ms). They wait for the one instead.
    private final class Slot: Sendable {
        let key: Key
        let table = Mutex<PositionTable?>(nil)

        init(_ key: Key) { self.key = key }

        /// The bytes its table takes, built or not.
        var bytes: Int { PositionTable.bytes(key.count) }
    }

    private struct State {
        var tables: [Slot] = []
        /// Scans of lists that have no table yet, by list (the latest few only).
        var scans: [(key: Key, count: Int)] = []
    }

    private let state = Mutex(State())
    private let builds = Atomic<Int>(0)

    /// Tables built so far.
    var built: Int { builds.load(ordering: .relaxed) }

    /// The position of the element whose id is `key`'s, nil where there is none.
    func position<Element: UniquelyIdentifiable>(of key: Element, in elements: [Element]) -> Int? {
        let hash = key.identityHash
        let matches = { (position: Int) in elements[position].identityHash == hash && elements[position].hasSameID(as: key) }
        guard elements.count >= AnchorIndex.shortest else { return elements.indices.first(where: matches) }
        let listKey = elements.withUnsafeBufferPointer { Key(address: UInt(bitPattern: $0.baseAddress), count: $0.count) }
        let slot = state.withLock { state -> Slot? in
            if let found = state.tables.firstIndex(where: { $0.key == listKey }) {
                // Most recently used last.
                let slot = state.tables.remove(at: found)
                state.tables.append(slot)
                return slot
            }
            let scans = (state.scans.first { $0.key == listKey }?.count ?? 0) + 1
            state.scans.removeAll { $0.key == listKey }
            guard scans > AnchorIndex.scansBeforeTable, PositionTable.bytes(elements.count) <= AnchorIndex.tableBytes else {
                state.scans.append((listKey, scans))
                if state.scans.count > AnchorIndex.tablesKept * 4 { state.scans.removeFirst() }
                return nil
            }
            // Listed before it is built, so that others asking meanwhile wait for it.
            let slot = Slot(listKey)
            state.tables.append(slot)
            while state.tables.count > AnchorIndex.tablesKept || state.tables.reduce(0, { $0 + $1.bytes }) > AnchorIndex.tableBytes {
                state.tables.removeFirst()
            }
            return slot
        }
        guard let slot else { return elements.indices.first(where: matches) }
        // A slot's list is alive while a caller holds it, so no other list has its storage
        // meanwhile: whoever builds the table builds it of this very list.
        let table = slot.table.withLock { table -> PositionTable in
            if let table { return table }
            let built = PositionTable(elements)
            builds.add(1, ordering: .relaxed)
            table = built
            return built
        }
        if let position = table.candidate(hash, where: matches) { return position }
        // Not where the table says: the table is another list's (this one's storage reused),
        // or the id is not here. Where the list has it, the table goes.
        guard let position = elements.indices.first(where: matches) else { return nil }
        state.withLock { state in state.tables.removeAll { $0 === slot } }
        return position
    }
}

/// An open-addressing table from ids' hashes to positions in one list (linear probing, at most
/// half full): 4 bytes a slot, the ids themselves read from the list.
final class PositionTable: Sendable {
    private let slots: [Int32]
    private let mask: Int

    /// The table's bytes.
    var bytes: Int { slots.count * MemoryLayout<Int32>.stride }

    /// The bytes of a table of `count` items.
    static func bytes(_ count: Int) -> Int { capacity(count) * MemoryLayout<Int32>.stride }

    /// At least twice the items, a power of two.
    private static func capacity(_ count: Int) -> Int {
        var capacity = 1
        while capacity < count * 2 { capacity <<= 1 }
        return capacity
    }

    /// Positions are kept as Int32: lists here are far shorter (the session limits).
    init<Element: UniquelyIdentifiable>(_ elements: [Element]) {
        let capacity = Self.capacity(elements.count)
        mask = capacity - 1
        // 0 is empty; a position is kept plus one.
        var slots = [Int32](repeating: 0, count: capacity)
        for (position, element) in elements.enumerated() where position < Int32.max {
            var slot = Self.mix(element.identityHash) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(position + 1)
        }
        self.slots = slots
    }

    /// The first position filed under `hash` that `matches`, nil where none does.
    func candidate(_ hash: Int, where matches: (Int) -> Bool) -> Int? {
        var slot = Self.mix(hash) & mask
        while slots[slot] != 0 {
            let position = Int(slots[slot]) - 1
            if matches(position) { return position }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Ids' hashes are mixed already, but some hold only 32 bits: a multiply spreads every
    /// bit of one over the bits the mask keeps.
    private static func mix(_ hash: Int) -> Int {
        let value = UInt64(bitPattern: Int64(hash)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: value >> 32)
    }
}
