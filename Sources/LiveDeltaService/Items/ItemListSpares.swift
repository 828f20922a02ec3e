import Synchronization

/// Storage for the item lists of long sessions, handed from one commit to a later one.
///
/// A commit to a session of a million items builds its new list (40 MB) while the session's
/// history still holds the old one. glibc maps any allocation over 32 MB afresh and unmaps it
/// when freed, so each such commit had the kernel zero 40 MB of new pages: in a profile of a
/// 100-item commit to a million items, that zeroing took a third of the server's CPU (on this
/// kind of virtual machine, where fresh pages cost more than copies). A commit finds here,
/// where it can, the storage of an older list that no one holds any more, already mapped, and
/// builds in it.
enum ItemListSpares {
    /// The process's spares.
    static let shared = ListSpares<JSONItem>(
        // Shorter lists are left to glibc, which reuses their memory itself: its threshold for
        // mapping afresh rises to 32 MB at most.
        shortest: (32 << 20) / MemoryLayout<JSONItem>.stride,
        // A feed's history holds the lists of its steps: with the default
        // `--live-history-bytes` (64 MB) a million-item session keeps one step, which holds
        // the list it made and the one before, so the list built three commits ago is the
        // first that may be free; a history of 1 GB keeps about 13 steps.
        watched: 16)
}

/// The lists built last, watched (a reference each, to lists their sessions and histories hold
/// anyway) until no one else holds one: then it is a spare, whose storage the next list of its
/// length is built in. At most one spare is kept beyond the watched lists' own holders, so the
/// memory this keeps alive that would have been freed is one list at most, except for lists
/// let go of all at once (a session deleted), kept until the next long list is built.
///
/// Meant for lists of plain values: a `JSONItem` refers to its document unowned (debug builds
/// track it), so emptying a spare releases nothing in a release build.
final class ListSpares<Element: Sendable>: Sendable {
    let shortest: Int
    let watched: Int
    /// A long list made afresh has room for this fraction more (1/32: 1.25 MB beside 40 MB).
    /// A session that grows (a feed inserted at the top) needs one more row at each commit, and
    /// a spare is the list of a commit some steps back: storage made to the row would fit none
    /// of the lists after it, and each commit would map 40 MB afresh (`make bench-windows`'
    /// insert at the top did, in some runs of a dozen commits, 100 to 150 ms each).
    static var growthRoom: Int { 32 }
    private static func room(for capacity: Int) -> Int { capacity + capacity / growthRoom }
    private let lists = Mutex<[[Element]]>([])

    init(shortest: Int, watched: Int) {
        self.shortest = shortest
        self.watched = watched
    }

    /// An empty list with room for `capacity` elements: in a spare's storage where one is large
    /// enough.
    func emptyList(capacity: Int) -> [Element] {
        var list =
            capacity < shortest
            ? []
            : lists.withLock { lists -> [Element] in
                guard let at = lists.indices.first(where: { lists[$0].capacity >= capacity && Self.isUnique(&lists[$0]) }) else {
                    return []
                }
                return lists.remove(at: at)
            }
        // Held by no one else, so its storage is kept; otherwise a new one, with room to grow.
        list.removeAll(keepingCapacity: true)
        if list.capacity < capacity { list.reserveCapacity(capacity < shortest ? capacity : Self.room(for: capacity)) }
        return list
    }

    /// Watches a list just built, to be a spare once no one else holds it.
    func watch(_ list: [Element]) {
        guard list.capacity >= shortest else { return }
        lists.withLock { lists in
            lists.append(list)
            var spares = 0
            // Newest first: the newest spare is kept, older ones and the oldest lists let go.
            for at in lists.indices.reversed() where Self.isUnique(&lists[at]) {
                spares += 1
                if spares > 1 { lists.remove(at: at) }
            }
            if lists.count > watched { lists.removeFirst(lists.count - watched) }
        }
    }

    /// Readies storage for a list of `capacity` elements beside the one spare kept, its pages
    /// written once (here, not in a commit, the kernel zeroes them as they are first written).
    /// A feed starting on a long session asks for it: from its second commit on, the feed's
    /// history holds the list before the session's, so a third list is alive while a commit
    /// builds the next; without this, that commit maps and zeroes it (on this kind of virtual
    /// machine, 100 to 150 ms for 40 MB, in the commit's answer and in every subscriber's
    /// event). The memory is what the feed's history needs from then on anyway.
    ///
    /// Two spares at most, of any length: feeds starting on many long sessions at once ready
    /// no more than one list beyond what `watch` keeps, and the next list watched lets it go
    /// where no commit took it.
    func reserve(capacity: Int) {
        guard capacity >= shortest, lists.withLock({ Self.spares(&$0) }) < 2 else { return }
        let list = [Element](unsafeUninitializedCapacity: Self.room(for: capacity)) { buffer, count in
            // Written, not initialized: the list stays empty, its pages mapped.
            UnsafeMutableRawBufferPointer(buffer).initializeMemory(as: UInt8.self, repeating: 0)
            count = 0
        }
        lists.withLock { lists in
            // Another may have readied one meanwhile.
            guard Self.spares(&lists) < 2 else { return }
            lists.append(list)
            if lists.count > watched { lists.removeFirst(lists.count - watched) }
        }
    }

    /// The spares a list of `capacity` elements could be built in now.
    func free(capacity: Int) -> Int { lists.withLock { Self.spares(&$0, fitting: capacity) } }

    private static func spares(_ lists: inout [[Element]], fitting capacity: Int = 0) -> Int {
        lists.indices.count { lists[$0].capacity >= capacity && isUnique(&lists[$0]) }
    }

    /// Lists watched now, spares included.
    var count: Int { lists.withLock { $0.count } }

    /// Whether no one but the caller holds `list`'s storage. An array is, in memory, one
    /// reference to its storage object, a native Swift object (on Linux, where arrays are never
    /// bridged): that reference is read in place, as a reference to a native class (the check
    /// reads only the object's reference count, the same in every native object), without a
    /// retain of its own that would make it shared. Not as `AnyObject`: unoptimized builds
    /// answer false for any object through it.
    static func isUnique(_ list: inout [Element]) -> Bool {
        guard MemoryLayout<[Element]>.size == MemoryLayout<NativeObject>.size, list.capacity > 0 else { return false }
        return withUnsafeMutablePointer(to: &list) { pointer in
            pointer.withMemoryRebound(to: NativeObject.self, capacity: 1) { isKnownUniquelyReferenced(&$0.pointee) }
        }
    }
}

/// Any native Swift object, for `ListSpares.isUnique`; never made.
private final class NativeObject {}
