import Foundation

/// A real Redis Cluster for a test: six `redis-server --cluster-enabled yes` on loopback (three
/// masters, each with a replica), made one cluster by `redis-cli --cluster create`; every node
/// stopped, and its directory removed, when the test is done.
public final class RedisClusterProcess: Sendable {
    public let nodes: [RedisProcess]

    /// `redis-cluster://` with every node as a seed.
    public var url: String { "redis-cluster://" + nodes.map { "127.0.0.1:\($0.port)" }.joined(separator: ",") }

    /// `nodeTimeout`: how long, in ms, a node may be unreachable before it counts as failing
    /// (a master's replica is promoted about a second after that). Short for the tests that
    /// kill a master; long enough for the others that a loaded machine, which may starve a
    /// node of the CPU for a while, does not fail one over in the middle of a test.
    public init(nodeTimeout: Int = 5_000) throws {
        var nodes: [RedisProcess] = []
        for _ in 0..<6 {
            // The cluster bus on a port of its own: port + 10000, the default, may be taken or
            // past 65535.
            nodes.append(
                try RedisProcess(arguments: [
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "\(nodeTimeout)",
                    "--cluster-port", "\(try RedisProcess.freePort())",
                ]))
        }
        self.nodes = nodes
        let (status, output) = try runProgram(
            ["/usr/bin/redis-cli", "--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" } + ["--cluster-replicas", "1", "--cluster-yes"])
        guard status == 0 else { throw ClientError.malformed("redis-cli --cluster create failed (\(status)): \(output)") }
        guard try settles() else { throw ClientError.malformed("the cluster did not come up: \(try cli(nodes[0], ["CLUSTER", "INFO"]))") }
    }

    /// Waits until every running node says the cluster is up and serves every slot, all agree
    /// on the masters, and every replica is in step with its master; false after 30 s.
    public func settles() throws -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let running = nodes.filter { $0.process.isRunning }
            let infos = try running.map { try cli($0, ["CLUSTER", "INFO"]) }
            let shards = try Set(running.map { try masters(seen: $0) })
            let replication = try running.map { try cli($0, ["INFO", "replication"]) }
            if infos.allSatisfy({ $0.contains("cluster_state:ok") && $0.contains("cluster_slots_ok:16384") }), shards.count == 1,
                replication.allSatisfy({ $0.contains("role:master") || $0.contains("master_link_status:up") })
            {
                return true
            }
            usleep(50_000)
        }
        return false
    }

    /// The masters `node` knows, by port, sorted.
    public func masters(seen node: RedisProcess) throws -> [UInt16] {
        try cli(node, ["CLUSTER", "NODES"]).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 2, fields[2].contains("master"), !fields[2].contains("fail"),
                let address = fields[1].split(separator: "@").first, let port = address.split(separator: ":").last
            else { return nil }
            return UInt16(port)
        }.sorted()
    }

    /// The master that serves `slot`, as a running node sees it.
    public func owner(of slot: Int) throws -> RedisProcess? {
        guard let asked = nodes.first(where: { $0.process.isRunning }) else { return nil }
        for line in try cli(asked, ["CLUSTER", "NODES"]).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 8, fields[2].contains("master"), !fields[2].contains("fail"),
                let port = fields[1].split(separator: "@").first?.split(separator: ":").last.flatMap({ UInt16($0) })
            else { continue }
            for range in fields[8...] where !range.hasPrefix("[") {
                let ends = range.split(separator: "-").compactMap { Int($0) }
                if let first = ends.first, (first...(ends.last ?? first)).contains(slot) { return node(port) }
            }
        }
        return nil
    }

    /// The slot of `key`, as the cluster computes it.
    public func slot(of key: String) throws -> Int {
        guard let asked = nodes.first(where: { $0.process.isRunning }),
            let slot = Int(try cli(asked, ["CLUSTER", "KEYSLOT", key]).trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw ClientError.malformed("CLUSTER KEYSLOT \(key) answered no number") }
        return slot
    }

    /// The node at `port`.
    public func node(_ port: UInt16) -> RedisProcess? { nodes.first { $0.port == port } }

    /// What `redis-cli` prints for `command` on `node`.
    @discardableResult
    public func cli(_ node: RedisProcess, _ command: [String]) throws -> String {
        let (status, output) = try runProgram(["/usr/bin/redis-cli", "-h", "127.0.0.1", "-p", "\(node.port)"] + command)
        guard status == 0 else { throw ClientError.malformed("redis-cli \(command.joined(separator: " ")) failed (\(status)): \(output)") }
        return output
    }

    /// Moves `slot` (and its keys) from its master to `target`'s, as `redis-cli --cluster
    /// reshard` does: importing and migrating marks, the keys migrated, then the new owner
    /// told to every master.
    public func move(slot: Int, from source: RedisProcess, to target: RedisProcess) throws {
        let targetID = try beginMove(slot: slot, from: source, to: target)
        try migrateKeys(slot: slot, from: source, to: target)
        for node in nodes where node.process.isRunning {
            if try masters(seen: node).contains(node.port) { try cli(node, ["CLUSTER", "SETSLOT", "\(slot)", "NODE", targetID]) }
        }
    }

    /// Marks `slot` as importing on `target` and migrating on `source` (a move under way: a
    /// key already moved is answered with `ASK`); returns `target`'s node id.
    @discardableResult
    public func beginMove(slot: Int, from source: RedisProcess, to target: RedisProcess) throws -> String {
        let targetID = try cli(target, ["CLUSTER", "MYID"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let sourceID = try cli(source, ["CLUSTER", "MYID"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try cli(target, ["CLUSTER", "SETSLOT", "\(slot)", "IMPORTING", sourceID])
        try cli(source, ["CLUSTER", "SETSLOT", "\(slot)", "MIGRATING", targetID])
        return targetID
    }

    /// Migrates the keys of `slot` that `source` still holds to `target`.
    public func migrateKeys(slot: Int, from source: RedisProcess, to target: RedisProcess) throws {
        while true {
            let keys = try cli(source, ["CLUSTER", "GETKEYSINSLOT", "\(slot)", "100"]).split(separator: "\n").map(String.init)
            guard !keys.isEmpty else { return }
            try cli(source, ["MIGRATE", "127.0.0.1", "\(target.port)", "", "0", "5000", "KEYS"] + keys)
        }
    }
}
