/// Where Redis is and how long to wait for it, from `redis://[:password@]host[:port][/db]`.
package struct RedisConfiguration: Sendable, Equatable {
    package var host: String
    package var port: Int
    package var database: Int
    /// Sent with AUTH on connecting; never logged (`description` hides it).
    package var password: String?
    package var connectTimeout: Duration = .seconds(1)
    package var commandTimeout: Duration = .seconds(1)
    /// Connections open at once, at most; a caller waits for a free one up to the command timeout.
    package var maxConnections = 16

    package init(host: String, port: Int = 6379, database: Int = 0, password: String? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.password = password
    }

    /// Reads a `redis://` URL; nil where it is not one.
    package init?(url: String) {
        guard url.hasPrefix("redis://") else { return nil }
        var rest = Substring(url.dropFirst("redis://".count))
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            // `:secret` or `user:secret`: only the password is used (Redis 5 AUTH).
            password = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).last.map(String.init)
            rest = rest[rest.index(after: at)...]
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty {
                guard let number = Int(path), number >= 0 else { return nil }
                database = number
            }
            rest = rest[..<slash]
        }
        var host = String(rest)
        var port = 6379
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(number) else { return nil }
            port = number
            host = String(rest[..<colon])
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port, database: database, password: password?.isEmpty == true ? nil : password)
    }

    /// The address without the password, for logs.
    package var description: String { "redis://\(password == nil ? "" : ":***@")\(host):\(port)/\(database)" }
}
