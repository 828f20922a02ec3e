import RedisClient

/// Where a Redis Cluster is, from `redis-cluster://[:password@]host:port[,host:port…][/0]`:
/// the nodes to learn the slot map from first (any of the cluster's, a few in case some are
/// down), and how every node is connected to (password, timeouts, connections a node).
package struct RedisClusterConfiguration: Sendable, Equatable {
    /// The nodes to ask for the slot map, until one answers.
    package var seeds: [ClusterNode]
    /// Every node's connection settings; its host and port are each node's own.
    package var node: RedisConfiguration
    /// How many redirections (`MOVED`, `ASK`) a command may follow before its reply is the
    /// last redirection: a slot map that does not settle is a broken cluster, not a loop.
    package var maxRedirections = 16

    package init(seeds: [ClusterNode], node: RedisConfiguration) {
        self.seeds = seeds
        self.node = node
    }

    /// Reads a `redis-cluster://` URL; nil where it is not one. A cluster has database 0 only,
    /// so a path other than `/0` is refused.
    package init?(url: String) {
        let scheme = "redis-cluster://"
        guard url.hasPrefix(scheme) else { return nil }
        var rest = Substring(url.dropFirst(scheme.count))
        var credentials = ""
        if let at = rest.lastIndex(of: "@") {
            credentials = String(rest[...at])
            rest = rest[rest.index(after: at)...]
        }
        var path = ""
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[slash...])
            rest = rest[..<slash]
        }
        guard path.isEmpty || path == "/" || path == "/0" else { return nil }
        var seeds: [ClusterNode] = []
        var node: RedisConfiguration?
        for address in rest.split(separator: ",", omittingEmptySubsequences: false) {
            // Each address read as a redis:// URL would be, for the same host and port rules.
            guard let parsed = RedisConfiguration(url: "redis://\(credentials)\(address)") else { return nil }
            seeds.append(ClusterNode(host: parsed.host, port: parsed.port))
            node = node ?? parsed
        }
        guard let node, !seeds.isEmpty else { return nil }
        self.init(seeds: seeds, node: node)
    }

    /// The addresses without the password, for logs.
    package var description: String {
        "redis-cluster://\(node.password == nil ? "" : ":***@")" + seeds.map(\.description).joined(separator: ",")
    }

    /// `node`'s settings for the node at `address`.
    func configuration(_ address: ClusterNode) -> RedisConfiguration {
        var configuration = node
        configuration.host = address.host
        configuration.port = address.port
        return configuration
    }
}

/// A cluster node's address.
package struct ClusterNode: Hashable, Sendable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// From `host:port`, as `MOVED` and `ASK` name nodes; nil for anything else.
    init?(_ text: Substring) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, (1...65_535).contains(port) else { return nil }
        self.init(host: host, port: port)
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
