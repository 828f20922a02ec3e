import RedisClient

/// Which master serves each slot, as the cluster last told it (`CLUSTER SLOTS`), corrected by
/// each `MOVED` since.
struct ClusterSlots: Sendable {
    private(set) var masters: [ClusterNode] = []
    /// For each slot, its master's index in `masters`; -1 where none serves it.
    private var owners = [Int16](repeating: -1, count: HashSlot.count)

    /// The map in a `CLUSTER SLOTS` reply from the node at `asked` (which names itself with an
    /// empty address where it does not know its own); nil where it is no such reply.
    init?(reply: RedisValue, asked: ClusterNode) {
        guard let ranges = reply.array else { return nil }
        for range in ranges {
            guard let fields = range.array, fields.count >= 3, let start = fields[0].integer, let end = fields[1].integer,
                start >= 0, start <= end, end < HashSlot.count, let master = fields[2].array, master.count >= 2,
                let host = master[0].bytes.map({ String(decoding: $0, as: UTF8.self) }), let port = master[1].integer
            else { return nil }
            let node = host.isEmpty || host == "?" ? ClusterNode(host: asked.host, port: port) : ClusterNode(host: host, port: port)
            let index = masters.firstIndex(of: node) ?? masters.count
            if index == masters.count { masters.append(node) }
            for slot in start...end { owners[slot] = Int16(index) }
        }
    }

    init() {}

    /// The master serving `slot`; nil where the map names none.
    func master(of slot: Int) -> ClusterNode? {
        let index = owners[slot]
        return index < 0 ? nil : masters[Int(index)]
    }

    /// `slot` is served by `node` now (a `MOVED`).
    mutating func move(_ slot: Int, to node: ClusterNode) {
        let index = masters.firstIndex(of: node) ?? masters.count
        if index == masters.count { masters.append(node) }
        owners[slot] = Int16(index)
    }

    /// Whether every slot has a master.
    var isComplete: Bool { !owners.contains(-1) }
}
