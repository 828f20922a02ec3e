/// Keys from least to most recently used: touching, removing and finding the oldest each cost
/// O(1), so that eviction never scans the whole store.
struct RecencyList<Key: Hashable & Sendable>: Sendable {
    private var links: [Key: (older: Key?, newer: Key?)] = [:]
    private(set) var oldest: Key?
    private var newest: Key?

    var count: Int { links.count }

    /// Makes `key` the most recently used, adding it where it is new.
    mutating func touch(_ key: Key) {
        if newest == key { return }
        remove(key)
        links[key] = (newest, nil)
        if let newest { links[newest]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
    }

    mutating func remove(_ key: Key) {
        guard let link = links.removeValue(forKey: key) else { return }
        if let older = link.older { links[older]?.newer = link.newer } else { oldest = link.newer }
        if let newer = link.newer { links[newer]?.older = link.older } else { newest = link.older }
    }

    /// The next more recently used key after `key`.
    func newer(than key: Key) -> Key? { links[key]?.newer }
}
