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
    func calls(of command: String) throws -> Int {
        var total = 0
        for port in ports {
            let info = Process()
            info.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            info.arguments = ["redis-cli", "-p", String(port), "INFO", "commandstats"]
            let pipe = Pipe()
            info.standardOutput = pipe
            try info.run()
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            info.waitUntilExit()
            guard let line = text.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_\(command):") }) else { continue }
            total += Int(line.split(separator: "=")[1].prefix { $0.isNumber }) ?? 0
        }
        return total
    }
}
