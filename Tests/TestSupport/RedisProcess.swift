import Foundation

/// A real `redis-server` for a test: on a free loopback port, without persistence, in a
/// temporary directory of its own; stopped (and the directory removed) when the test is done.
// @unchecked Sendable: `process` is replaced only by `restart`, which tests call from one thread.
public final class RedisProcess: @unchecked Sendable {  // see above
    public private(set) var process = Process()
    public let port: UInt16
    public let directory: URL
    private let extra: [String]

    public var url: String { "redis://127.0.0.1:\(port)" }

    public init(arguments: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        extra = arguments
        try start()
    }

    /// Starts the server (again, after `stop`), on the same port, and waits until it answers.
    public func start() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments =
            [
                "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory.path, "--daemonize", "no",
                "--loglevel", "warning",
            ] + extra
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let connection = try? HTTPConnection(port: port, timeoutSeconds: 1) {
                _ = connection
                // A server that could not take the port exits at once; what answered was then
                // some other process (a port reused by a parallel test), which must not pass.
                usleep(20_000)
                guard process.isRunning else { throw ClientError.malformed("redis-server could not listen on port \(port)") }
                return
            }
            usleep(10_000)
        }
        throw ClientError.malformed("redis-server did not start on port \(port)")
    }

    /// Stops the server at once (SIGKILL: it keeps nothing, so there is nothing to save) and
    /// waits until it has gone.
    public func stop() {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        kill(pid, SIGKILL)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && !Self.hasExited(pid) && Date() < deadline { usleep(2_000) }
    }

    /// Freezes or thaws the server (SIGSTOP, SIGCONT): it keeps its connections but answers
    /// nothing, as an overloaded or partitioned server does.
    public func pause(_ paused: Bool) { kill(process.processIdentifier, paused ? SIGSTOP : SIGCONT) }

    /// How many times `command` (lowercase) has run on this server, by `INFO commandstats`.
    public func calls(of command: String) throws -> Int { try Self.calls(of: command, ports: [port]) }

    /// The same on the servers at `ports` together (a cluster's nodes).
    public static func calls(of command: String, ports: [UInt16]) throws -> Int {
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

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether every thread of the process has exited, so its sockets are closed and its port
    /// free, whenever Foundation gets to reap it. The main thread's being a zombie is not
    /// enough: Redis's background threads can still be exiting then, holding the descriptors,
    /// and a server started at once on the port could not listen, while a probe of the port
    /// was answered by the old, dying listener.
    static func hasExited(_ pid: Int32) -> Bool {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return true }
        guard threads == ["\(pid)"] else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // "pid (name) S …": the state follows the closing parenthesis.
        return stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).first == "Z"
    }

    static func freePort() throws -> UInt16 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw ClientError.connect(errno) }
        return UInt16(bigEndian: address.sin_port)
    }
}
