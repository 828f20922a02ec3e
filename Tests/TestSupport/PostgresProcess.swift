import Foundation

/// A real PostgreSQL 15 for a test: a cluster made by `initdb` in a temporary directory and run
/// by `pg_ctl`, on a unix socket in that directory only (no TCP port), without fsync; stopped
/// and removed when the test is done. Run as the `postgres` user (through `runuser`) where the
/// tests run as root, which `initdb` refuses.
// @unchecked Sendable: its state is the directory, set once; tests stop and start it from one thread.
public final class PostgresProcess: @unchecked Sendable {  // see above
    public static let binaries = "/usr/lib/postgresql/15/bin"
    public let directory: URL

    /// For libpq (`--postgres`): the socket's directory, the superuser, its database.
    public var conninfo: String { "host=\(directory.path) user=postgres dbname=postgres" }

    public init() throws {
        guard FileManager.default.isExecutableFile(atPath: "\(Self.binaries)/initdb") else {
            throw ClientError.malformed("PostgreSQL 15 is not installed (\(Self.binaries)/initdb): make deps installs it")
        }
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0, let user = getpwnam("postgres") {
            chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        try Self.run(["\(Self.binaries)/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"], asServer: true)
        try start()
    }

    private var data: String { directory.appendingPathComponent("data").path }

    /// Starts the server (again, after `stop`) and waits until it takes connections.
    public func start() throws {
        try Self.run(
            [
                "\(Self.binaries)/pg_ctl", "-D", data, "-w", "-t", "60", "-l", directory.appendingPathComponent("log").path, "-o",
                "-c listen_addresses='' -k \(directory.path) -c fsync=off -c full_page_writes=off", "start",
            ], asServer: true)
    }

    /// Stops the server at once (`-m immediate`: connections are cut, as by a crash) and waits
    /// until it has gone.
    public func stop() {
        _ = try? Self.run(["\(Self.binaries)/pg_ctl", "-D", data, "-w", "-m", "immediate", "stop"], asServer: true)
    }

    /// Runs SQL through psql; its output unaligned, tuples only (a value a line).
    @discardableResult
    public func sql(_ text: String) throws -> String {
        try Self.run(["/usr/bin/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory.path, "-U", "postgres", "-c", text])
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `command` (as `postgres` for the server's own tools when root); throws where it
    /// fails, with what it printed.
    @discardableResult
    private static func run(_ command: [String], asServer: Bool = false) throws -> String {
        let asRoot = asServer && getuid() == 0
        let (status, text) = try runProgram(asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + command : command)
        guard status == 0 else { throw ClientError.malformed("\(command.joined(separator: " ")) failed (\(status)): \(text)") }
        return text
    }
}

/// Runs a program to its end: its exit status (-1 where a signal ended it) and what it printed
/// (standard output and error, through a file: a server the program starts, as pg_ctl does,
/// may hold a pipe's end for as long as it runs). By posix_spawn and waitpid, as Foundation's
/// Process missed some of these exits (runuser's).
public func runProgram(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString)").path
    defer { unlink(path) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
    guard spawned == 0 else { throw ClientError.malformed("\(arguments[0]) could not start: \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    // Exited (the low 7 bits 0): its status; else the signal that ended it.
    return (status & 0x7f == 0 ? (status >> 8) & 0xff : -1, text)
}
