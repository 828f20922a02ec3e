#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A numeric IPv4 or IPv6 listening address with its port.
enum SocketAddress {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    /// Parses `host` as a numeric address; `localhost` means the IPv4 loopback.
    init?(host: String, port: UInt16) {
        let host = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            self = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            self = .v6(v6)
            return
        }
        return nil
    }

    var isIPv6: Bool {
        if case .v6 = self { return true }
        return false
    }

    var port: UInt16 {
        switch self {
        case .v4(let address): UInt16(bigEndian: address.sin_port)
        case .v6(let address): UInt16(bigEndian: address.sin6_port)
        }
    }

    var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch self {
        case .v4(var address): inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
        case .v6(var address): inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func withSockaddrPointer<R>(_ body: ((pointer: UnsafePointer<sockaddr>, length: socklen_t)) -> R) -> R {
        switch self {
        case .v4(var address):
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(($0, socklen_t(MemoryLayout<sockaddr_in>.size))) }
            }
        case .v6(var address):
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(($0, socklen_t(MemoryLayout<sockaddr_in6>.size))) }
            }
        }
    }
}
