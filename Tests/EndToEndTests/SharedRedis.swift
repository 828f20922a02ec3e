import Foundation
import TestSupport

/// A Redis that server replicas share, for the suites that run on both: one `redis-server`,
/// or a six-node cluster (three masters, each with a replica).
struct SharedRedis {
    let single: RedisProcess?
    let cluster: RedisClusterProcess?

    init(cluster: Bool) throws {
        single = cluster ? nil : try RedisProcess()
        self.cluster = cluster ? try RedisClusterProcess() : nil
    }

    /// What `--session-store` takes.
    var url: String { single?.url ?? cluster?.url ?? "" }

    /// Every node's port.
    var ports: [UInt16] { single.map { [$0.port] } ?? cluster?.nodes.map(\.port) ?? [] }

    /// How many times `command` has run on every node together, by `INFO commandstats`.
    func calls(of command: String) throws -> Int { try RedisProcess.calls(of: command, ports: ports) }
}
