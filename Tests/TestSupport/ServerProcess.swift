import Foundation

/// The real `livedelta` binary, started on a free port for a test and stopped after it.
// @unchecked Sendable: `output` and `reading` are guarded by `lock`; everything else is set in init.
public final class ServerProcess: @unchecked Sendable {  // see above
    public let process = Process()
    public private(set) var port: UInt16 = 0
    private let lock = NSLock()
    private var output = ""
    /// Whether the output handler is between reading from the pipe and adding what it read.
    private var reading = false
    private let outputPipe = Pipe()

    /// The binary: $LIVEDELTA_BINARY, else `livedelta` beside the test bundle.
    public static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["LIVEDELTA_BINARY"] { return URL(fileURLWithPath: path) }
        return builtProduct("livedelta")
    }

    /// An executable this package built, beside the test bundle (in the test bundle's build).
    public static func builtProduct(_ name: String) -> URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }

    /// - Parameter descriptorLimit: where given, the binary starts under `ulimit -n` of that
    ///   many descriptors, soft and hard, as a login shell or a container may start it.
    public init(arguments: [String] = [], environment: [String: String] = [:], descriptorLimit: Int? = nil) throws {
        let serverArguments = ["--port", "0", "--host", "127.0.0.1"] + arguments
        if let descriptorLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", Self.binary.path] + serverArguments
        } else {
            process.executableURL = Self.binary
            process.arguments = serverArguments
        }
        var variables = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LIVEDELTA_") }
        for (key, value) in environment { variables[key] = value }
        process.environment = variables
        process.standardOutput = outputPipe
        process.standardError = outputPipe
        outputPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            self?.lock.withLock { self?.reading = true }
            let data = handle.availableData
            // At the end, a handler left in place would be called again and again.
            if data.isEmpty { handle.readabilityHandler = nil }
            guard let self else { return }
            self.lock.withLock {
                self.output += String(decoding: data, as: UTF8.self)
                self.reading = false
            }
        }
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let port = lock.withLock({ Self.listeningPort(in: output) }) {
                self.port = port
                return
            }
            if !process.isRunning { break }
            usleep(10_000)
        }
        process.terminate()
        throw ClientError.malformed("the server did not start: \(log)")
    }

    /// The port from the "listening" line, in either log format (`port=8080`, `"port":8080`).
    static func listeningPort(in log: String) -> UInt16? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("listening") }) else { return nil }
        for marker in ["port=", "\"port\":\"", "\"port\":"] {
            if let range = line.range(of: marker) {
                return UInt16(line[range.upperBound...].prefix(while: \.isNumber))
            }
        }
        return nil
    }

    /// Everything the server printed so far.
    public var log: String { lock.withLock { output } }

    /// Whether the log shows every one of `texts` within `seconds`: it arrives through a pipe,
    /// read on another thread a little after the server writes it.
    public func logShows(_ texts: String..., within seconds: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            let log = self.log
            if texts.allSatisfy({ log.contains($0) }) { return true }
            usleep(10_000)
        } while Date() < deadline
        return false
    }

    public func connection(from source: String? = nil) throws -> HTTPConnection { try HTTPConnection(port: port, source: source) }

    /// Freezes or thaws the server (SIGSTOP, SIGCONT): it keeps its connections and
    /// subscriptions, and what reaches them waits in their sockets, as for a replica that falls
    /// behind.
    public func pause(_ paused: Bool) { kill(process.processIdentifier, paused ? SIGSTOP : SIGCONT) }

    /// Sends a signal and waits for the exit status (nil on timeout), then for the last of
    /// the output to be read, so that `log` afterwards holds all the process wrote.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: TimeInterval = 20) -> Int32? {
        if process.isRunning { kill(process.processIdentifier, signal) }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { return nil }
        // Everything the process wrote is in the pipe by now. The pipe's end cannot be waited
        // for: servers that other tests start at the same time inherit its writing side.
        let drained = Date().addingTimeInterval(5)
        // The pipe first: the handler marks itself reading before it takes bytes out.
        while (hasUnreadOutput || lock.withLock({ reading })) && Date() < drained { usleep(5_000) }
        return process.terminationStatus
    }

    /// Whether bytes wait in the output pipe.
    private var hasUnreadOutput: Bool {
        var waiting = pollfd(fd: outputPipe.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&waiting, 1, 0) > 0 && waiting.revents & Int16(POLLIN) != 0
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
