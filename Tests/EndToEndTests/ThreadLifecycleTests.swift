import Foundation
import TestSupport
import Testing

/// A server started and stopped ten times in one process leaves no thread of its own behind:
/// every pool, watcher, ticker and listener it started is ended and joined by its stop. Run
/// in a process of its own (Tests/ThreadLifecycle), since tests here start threads in parallel.
@Suite struct ThreadLifecycleTests {
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = ServerProcess.builtProduct("ThreadLifecycle")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @Test func tenStartsAndStopsLeaveNoThreadWithTheMemoryStore() throws {
        let (status, output) = try Self.run([])
        #expect(status == 0 && output.contains("no thread left"), "\(output)")
    }

    @Test func tenStartsAndStopsLeaveNoThreadWithTheRedisStore() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        let (status, output) = try Self.run([redis.url])
        #expect(status == 0 && output.contains("no thread left"), "\(output)")
    }
}
