// Starts and stops a server ten times in this one process, as `livedelta serve` runs one, with
// traffic that starts every kind of thread it has (event loops, the acceptor, both request
// pools, the hang-up watcher, the live hub's ticker and fan-out, the thread a JWK Set is read
// again on, and with a Redis URL as the argument, the shared store's listener), and prints
// whether any thread it started is left.
// Exits 1 where one is. Run by EndToEndTests (ThreadLifecycleTests).
import LiveDeltaRedis
import LiveDeltaService
import Logging
import MicroHTTP
import RedisClient
import TestSupport
import TokenAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The names of this process's threads now.
func threadNames() -> [String] {
    guard let directory = opendir("/proc/self/task") else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let id = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard id.first?.isNumber == true, let file = fopen("/proc/self/task/\(id)/comm", "r") else { continue }
        var line = [CChar](repeating: 0, count: 64)
        _ = fgets(&line, 64, file)
        fclose(file)
        names.append(String(decoding: line.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return names.sorted()
}

/// A service whose tokens are checked against a JWK Set, made to read the set again (a token
/// names a key the set lacks): that starts the thread the set is read on, which the service's
/// stop must end.
func keySetReadAgain(logger: Logger) throws -> LiveDeltaService {
    var policy = TokenVerifier.Policy()
    policy.keySetFloorSeconds = 0
    let thread = AccessPolicy.keySetThread()
    let keySet = TokenVerifier.KeySetRefresh(read: { [] }, run: { thread.run($0) })
    let verifier = TokenVerifier(keys: [], keySet: keySet, policy: policy, now: AccessPolicy.unixNow())
    let service = LiveDeltaService(access: AccessPolicy(verifier: verifier, keySetThread: thread), logger: logger)
    // {"alg":"HS256","kid":"new"}, {}, and a signature no key verifies.
    _ = verifier.verify("eyJhbGciOiJIUzI1NiIsImtpZCI6Im5ldyJ9.e30.AAAA", now: AccessPolicy.unixNow())
    _ = eventually { threadNames().contains("jwks-refresh") }
    guard verifier.keySetReads == 1, threadNames().contains("jwks-refresh") else {
        throw ClientError.malformed("the key set was not read again on its thread")
    }
    return service
}

/// One server's life: started, used, stopped as `Serve` stops it.
func round(redis: String?) throws {
    let sessions: (any SessionStore)? = try redis.map { url in
        guard let configuration = RedisConfiguration(url: url) else { throw ClientError.malformed("not a Redis URL: \(url)") }
        return SharedSessionStore.redis(RedisPool(configuration)) { _ in }
    }
    var logger = Logger(label: "thread-lifecycle")
    logger.logLevel = .warning
    let service = LiveDeltaService(sessions: sessions, logger: logger)
    var configuration = HTTPServer.Configuration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.threads = 2
    configuration.maxStreams = 100
    configuration.offloadBodySize = 1 << 10
    configuration.mayWait = { service.mayWait($0) }
    configuration.errorResponse = { service.errorResponse($0) }
    let server = try HTTPServer(configuration: configuration, handler: service.handle)
    let client = try HTTPConnection(port: server.port)
    guard try [200, 201].contains(client.request("PUT", "/sessions/s", json: #"{"items":[1,2,3]}"#).status) else {
        throw ClientError.malformed("PUT")
    }
    // A body past offloadBodySize runs on the pool for large requests.
    let items = (0..<500).map(String.init).joined(separator: ",")
    guard try client.request("POST", "/diff", json: #"{"old":[\#(items)],"new":[\#(items)]}"#).status == 200 else {
        throw ClientError.malformed("POST /diff")
    }
    // A stream: the hang-up watcher, and an update through the fan-out.
    let stream = try EventStreamClient(port: server.port, path: "/sessions/s/events")
    guard try stream.next()?.event == "reset" else { throw ClientError.malformed("no reset") }
    guard try client.request("POST", "/sessions/s/update", json: #"{"items":[3,2,1]}"#).status == 200 else {
        throw ClientError.malformed("update")
    }
    let next = try stream.next()
    guard next?.event == "delta" else { throw ClientError.malformed("no delta but \(String(describing: next))") }
    let guarded = try keySetReadAgain(logger: logger)
    let running = Set(threadNames())
    let expected: Set = ["http-large", "http-waiting", "http-hangups", "live-fanout", "live-ticker", "jwks-refresh"]
    guard expected.isSubset(of: running) else { throw ClientError.malformed("threads not started: \(expected.subtracting(running))") }
    _ = service.live.shutdown()
    guard server.stop(grace: .seconds(5)).drained else { throw ClientError.malformed("the stop did not drain") }
    service.stop()
    guarded.stop()
}

let redis = CommandLine.arguments.dropFirst().first
// The first round starts what the process keeps whatever it serves (the runtime's own).
try round(redis: redis)
let first = threadNames()
for _ in 2...10 { try round(redis: redis) }
let ours = ["http-", "live-", "redis-", "jwks-"]
func leftOver(_ names: [String]) -> [String] { names.filter { name in ours.contains { name.hasPrefix($0) } } }
// A joined thread can still be listed for a moment: the kernel wakes its joiner on the way
// out, before it removes the thread (a clean run once saw a joined jwks-refresh). A thread
// that was not ended stays, and is reported after the wait.
_ = eventually(within: 10) {
    let names = threadNames()
    return names.count <= first.count && leftOver(names).isEmpty
}
let last = threadNames()
print("threads after the first stop: \(first.count) \(first)")
print("threads after the tenth stop: \(last.count) \(last)")
let left = leftOver(last)
if last.count > first.count || !left.isEmpty {
    print("left: \(left)")
    exit(1)
}
print("no thread left")
