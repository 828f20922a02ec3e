import Foundation
import LiveDeltaKit
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The Swift client against the real binary: every call; a write retried with its key is
/// committed once; a session followed into a LiveList through a kill and a restart (Redis
/// store) with no version twice or missed; a missing session stops following with its reason.
@Suite(.serialized) struct ClientTests {
    static func client(_ server: ServerProcess, token: LiveDeltaClient.TokenProvider? = nil) -> LiveDeltaClient {
        LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, token: token)
    }

    @Test func everyCall() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = Self.client(server)
        let diff = try await client.diff(.items([Row(id: 1, v: 0), Row(id: 2, v: 0)]), .items([Row(id: 2, v: 0), Row(id: 1, v: 1)]))
        #expect(diff.delta?.moves.count == 1 && diff.delta?.reloads.count == 1)
        let created = try await client.createSession(SessionCollection.items([Row(id: 1, v: 0)]))
        #expect(created.version == 0)
        let put = try await client.putSession("kit", SessionCollection.items([Row(id: 1, v: 0), Row(id: 2, v: 0)]))
        #expect(put.id == "kit" && put.version == 0)
        let updated = try await client.update(
            "kit", to: SessionCollection.items([Row(id: 2, v: 0), Row(id: 1, v: 0)]), write: WriteOptions(ifMatch: 0))
        #expect(updated.version == 1 && updated.baseVersion == 0 && updated.answer.delta?.moves.count == 1)
        let appended = try await client.append("kit", SessionCollection.items([Row(id: 3, v: 0)]))
        #expect(appended.answer.delta?.insertions == [2])
        let preview = try await client.delta("kit", to: SessionCollection.items([Row(id: 3, v: 0)]))
        #expect(preview.answer.delta?.deletions == [0, 1])
        let changed = try await client.changes(
            "kit",
            operations: [.object(["op": .string("update"), "id": .number(2), "item": .object(["id": .number(2), "v": .number(5)])])])
        #expect(changed.version == 3)
        let patched = try await client.patch("kit", [.object(["op": .string("remove"), "path": .string("/2")])])
        #expect(patched.version == 4)
        let session: SessionState<Row> = try await client.session("kit")
        #expect(session.items == [Row(id: 2, v: 5), Row(id: 1, v: 0)])
        await #expect(throws: LiveDeltaError.self) {
            try await client.update("kit", to: SessionCollection.items([Row]()), write: WriteOptions(ifMatch: 0))
        }
        do {
            _ = try await client.update("kit", to: SessionCollection.items([Row]()), write: WriteOptions(ifMatch: 0))
        } catch let error as LiveDeltaError {
            #expect(error.status == 412 && error.code == "version_mismatch" && !error.isTransient)
        }
        let sections = try await client.putSession(
            "kit-shelf", SessionCollection.sections([LiveSection(id: .string("a"), fields: ["title": .string("A")], items: [Row(id: 1, v: 0)])]))
        #expect(sections.sectionCount == 1)
        try await client.deleteSession("kit", write: WriteOptions(ifMatch: 4))
        await #expect(throws: LiveDeltaError.self) { let _: SessionState<Row> = try await client.session("kit") }
    }

    @Test func aWriteSentTwiceWithItsKeyIsCommittedOnce() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = Self.client(server)
        _ = try await client.putSession("once", SessionCollection.items([Row]()))
        let key = WriteOptions(idempotencyKey: UUID().uuidString)
        let first = try await client.append("once", SessionCollection.items([Row(id: 1, v: 0)]), write: key)
        let again = try await client.append("once", SessionCollection.items([Row(id: 1, v: 0)]), write: key)
        #expect(first.version == 1 && again.version == 1)
        let session: SessionState<Row> = try await client.session("once")
        #expect(session.version == 1 && session.items?.count == 1)
    }

    @Test func anAppendWhoseAnswerIsLostIsRetriedAndCommittedOnce() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        _ = try await Self.client(server).putSession("lost", SessionCollection.items([Row]()))
        let proxy = try LosingProxy(forwardingTo: server.port, losing: 1)
        defer { proxy.close() }
        // Through the proxy, which lets the first answer go: the client sends the append again,
        // with the same key, and gets the first answer.
        let client = LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!)
        let answer = try await client.append("lost", SessionCollection.items([Row(id: 7, v: 0)]))
        #expect(answer.version == 1 && proxy.forwarded == 2)
        let session: SessionState<Row> = try await Self.client(server).session("lost")
        #expect(session.version == 1 && session.items == [Row(id: 7, v: 0)])
    }

    /// A 408 (the request did not arrive in time: nothing was done) is retried like a 429 or a
    /// 503, with the write's key, and the write is committed once.
    @Test func aWriteTimedOutBeforeItArrivedIsRetried() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        _ = try await Self.client(server).putSession("late", SessionCollection.items([Row]()))
        let proxy = try LosingProxy(forwardingTo: server.port, losing: 0, timingOut: 2)
        defer { proxy.close() }
        let client = LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!)
        let answer = try await client.append("late", SessionCollection.items([Row(id: 7, v: 0)]))
        #expect(answer.version == 1 && proxy.forwarded == 1)
        let session: SessionState<Row> = try await Self.client(server).session("late")
        #expect(session.version == 1 && session.items == [Row(id: 7, v: 0)])
    }

    /// A proxy that lost the answer and holds the connection open, silent: the write is sent
    /// again after `writeTimeout`, with its key, and answered with the first answer. Before,
    /// it waited for URLSession's own timeout (here 10 minutes: the test's time limit fails it).
    @Test(.timeLimit(.minutes(1))) func aWriteWhoseAnswerIsHeldBackIsRetriedAfterItsTimeout() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        _ = try await Self.client(server).putSession("held", SessionCollection.items([Row]()))
        let proxy = try LosingProxy(forwardingTo: server.port, losing: 1, holding: true)
        defer { proxy.close() }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 600
        let client = LiveDeltaClient(
            baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!, session: URLSession(configuration: configuration), writeTimeout: 1)
        let answer = try await client.append("held", SessionCollection.items([Row(id: 7, v: 0)]))
        #expect(answer.version == 1 && proxy.forwarded == 2)
        let session: SessionState<Row> = try await Self.client(server).session("held")
        #expect(session.version == 1 && session.items == [Row(id: 7, v: 0)])
    }

    @Test func aLiveListFollowsThroughAKillAndARestart() async throws {
        let redis = try RedisProcess()
        var server = try ServerProcess(arguments: ["--session-store", redis.url])
        let port = server.port
        let client = Self.client(server)
        _ = try await client.putSession("followed", SessionCollection.items([Row(id: 0, v: 0)]))
        let list = await LiveList<Row>()
        let seen = Versions()
        let journal = Journal()
        await MainActor.run { list.onChange = { _ in seen.append(list.version) } }
        var options = FollowOptions()
        options.minDelay = 0.1
        options.maxDelay = 0.4
        // The follower's updates, each noted, into the list.
        let following = Task { @MainActor in
            for try await update in client.follow("followed", as: Row.self, options: options) {
                journal.note(update, taken: list.take(update))
            }
        }
        try await Self.until { await list.version == 0 }
        var items = [Row(id: 0, v: 0)]
        for step in 1...20 {
            items = [Row(id: step, v: 0)] + items.prefix(5)
            _ = try await client.update("followed", to: SessionCollection.items(items))
        }
        try await Self.until { await list.version == 20 }
        let before = journal.count
        _ = server.stop(signal: SIGKILL)
        server = try ServerProcess(arguments: ["--session-store", redis.url, "--port", String(port)])
        // Live again on the new process: the kill was noticed and a stream opened since.
        try await Self.until { journal.reconnected(after: before) }
        for step in 21...40 {
            items = [Row(id: step, v: 0)] + items.prefix(5)
            _ = try await client.update("followed", to: SessionCollection.items(items))
        }
        try await Self.until { await list.version == 40 }
        let final: SessionState<Row> = try await client.session("followed")
        #expect(await list.items == final.items)
        let versions = seen.all.compactMap { $0 }
        #expect(versions == Array(0...40), "every version once, in order: \(journal.all)\n\(server.log)")
        following.cancel()
        _ = server.stop()
    }

    @Test func aListMovesToAnotherReplicaByItsResumeToken() async throws {
        let redis = try RedisProcess()
        let first = try ServerProcess(arguments: ["--session-store", redis.url])
        let second = try ServerProcess(arguments: ["--session-store", redis.url])
        defer {
            _ = first.stop()
            _ = second.stop()
        }
        let writer = Self.client(first)
        _ = try await writer.putSession("moving", SessionCollection.items([Row(id: 0, v: 0)]))
        let list = await LiveList<Row>()
        let seen = Versions()
        let journal = Journal()
        await MainActor.run { list.onChange = { _ in seen.append(list.version) } }
        func follow(_ server: ServerProcess, options: FollowOptions = FollowOptions()) -> Task<Void, any Error> {
            Task { @MainActor in
                for try await update in Self.client(server).follow("moving", as: Row.self, options: options) {
                    journal.note(update, taken: list.take(update))
                }
            }
        }
        var following = follow(first)
        try await Self.until { await list.version == 0 }
        for step in 1...10 { _ = try await writer.update("moving", to: SessionCollection.items([Row(id: step, v: 0)])) }
        try await Self.until { await list.version == 10 }
        following.cancel()
        // Versions committed while the list is between replicas: it gets them on the other.
        for step in 11...15 { _ = try await writer.update("moving", to: SessionCollection.items([Row(id: step, v: 0)])) }
        var options = FollowOptions()
        options.since = await list.resumeToken
        following = follow(second, options: options)
        for step in 16...20 { _ = try await Self.client(second).update("moving", to: SessionCollection.items([Row(id: step, v: 0)])) }
        try await Self.until { await list.version == 20 }
        #expect(await list.items == [Row(id: 20, v: 0)])
        let versions = seen.all.compactMap { $0 }
        // Every version once: the versions committed while it was between replicas come from the
        // shared store's log on the other.
        #expect(versions == Array(0...20), "\(journal.all)\n\(second.log)")
        following.cancel()
    }

    @Test func aMissingSessionStopsFollowingWithItsReason() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        do {
            for try await _ in Self.client(server).follow("nobody", as: Row.self) {}
            Issue.record("following a missing session should fail")
        } catch let error as LiveDeltaError {
            #expect(error.status == 404 && error.code == "session_not_found")
        }
    }

    static func until(_ condition: @escaping () async -> Bool, seconds: Double = 20) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if await condition() { return }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        Issue.record("waited \(seconds) s")
        throw CancellationError()
    }
}

/// Versions a list went through, as its onChange saw them.
final class Versions: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var values: [Int?] = []
    func append(_ value: Int?) { lock.withLock { values.append(value) } }
    var all: [Int?] { lock.withLock { values } }
    var count: Int { lock.withLock { values.count } }
}

/// What a list was given, for a failure to say what happened.
final class Journal: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var lines: [String] = []

    func note<Item>(_ update: LiveUpdate<Item>, taken: Bool) {
        let line: String
        switch update {
        case .reset(let state, let reason): line = "reset to \(state.version) (\(reason))"
        case .delta(let event): line = "delta \(event.baseVersion)→\(event.version)\(taken ? "" : " refused")"
        case .window(let event): line = "window \(event.baseVersion)→\(event.version)\(taken ? "" : " refused")"
        case .connection(let state): line = "\(state)"
        }
        lock.withLock { lines.append(line) }
    }

    var all: [String] { lock.withLock { lines } }
    var count: Int { lock.withLock { lines.count } }

    /// Whether the connection went down and came back live after the first `count` lines.
    func reconnected(after count: Int) -> Bool {
        let later = all.dropFirst(count)
        guard let down = later.firstIndex(where: { $0.hasPrefix("reconnecting") }) else { return false }
        return later[down...].contains("live")
    }
}
