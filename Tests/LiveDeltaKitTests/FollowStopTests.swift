import Foundation
import LiveDeltaKit
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How following ends, against the real binary: an event the app's item type cannot decode (each kind the
/// server accepts) stops the list with a typed error naming the session, version and why,
/// instead of asking for it again for ever; `.readAfresh` passes it by to a reset that
/// decodes; a deletion, a cancellation and a refusal each end `follow` with their own value,
/// and `connection` says it; a replacement's reset says so.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FollowStopTests {
    /// An app's item, with a string and a double to decode.
    struct Film: Codable, Sendable, Equatable {
        var id: Int
        var title: String
        var rating: Double
    }

    /// Item texts the server takes and `Film` cannot: a missing field, a null item, a lone
    /// surrogate, a number past Double.
    static let undecodable = [
        #"{"id":1,"title":"a"}"#, #"null"#, #"{"id":1,"title":"\ud800","rating":0}"#, #"{"id":1,"title":"a","rating":1e309}"#,
    ]
    static let clean = #"{"id":2,"title":"b","rating":0.5}"#
    static let film = Film(id: 2, title: "b", rating: 0.5)

    @Test(arguments: undecodable) func anUndecodableEventStopsTheListAndSaysWhy(item: String) async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = ClientTests.client(server)
        let id = "bad-\(abs(item.hashValue))"
        let token = try await Self.badThenClean(id, item, server, client)
        let list = await LiveList<Film>()
        var options = FollowOptions()
        options.since = token
        options.minDelay = 0.05
        do {
            try await list.follow(id, with: client, options: options)
            Issue.record("following should stop on \(item)")
        } catch FollowEnd.undecodable(let event) {
            #expect(event.session == id && event.version == 1 && event.event == "delta" && !event.reason.isEmpty, "\(event)")
            #expect(await list.connection == .stopped(.undecodable(event)))
        }
        // Nothing of version 1 (or 2) was shown.
        #expect(await list.version == nil)
    }

    @Test(arguments: undecodable) func readingAfreshPassesItByToAResetThatDecodes(item: String) async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = ClientTests.client(server)
        let id = "skipped-\(abs(item.hashValue))"
        let token = try await Self.badThenClean(id, item, server, client)
        let list = await LiveList<Film>()
        let journal = Journal()
        var options = FollowOptions()
        options.since = token
        options.undecodable = .readAfresh
        let following = Task { @MainActor in
            for try await update in client.follow(id, as: Film.self, options: options) { journal.note(update, taken: list.take(update)) }
        }
        defer { following.cancel() }
        try await ClientTests.until { await list.version == 2 }
        #expect(await list.items == [Self.film])
        let reset = journal.all.first { $0.hasPrefix("reset to 2") } ?? ""
        #expect(reset.contains("the delta at version 1 could not be decoded"), "\(journal.all)")
        // Still following: the next version comes as a delta.
        try Self.update(server, id, items: #"[{"id":3,"title":"c","rating":1}]"#)
        try await ClientTests.until { await list.version == 3 }
        #expect(journal.all.last == "delta 2→3")
    }

    @Test func aResetThatDoesNotDecodeEitherStops() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = ClientTests.client(server)
        let token = try await Self.followedToVersionZero("still-bad", client)
        try Self.update(server, "still-bad", items: #"[{"id":1,"title":"a"}]"#)
        let list = await LiveList<Film>()
        var options = FollowOptions()
        options.since = token
        options.undecodable = .readAfresh
        await #expect(throws: FollowEnd.self) { try await list.follow("still-bad", with: client, options: options) }
        guard case .stopped(.undecodable(let event)) = await list.connection else {
            Issue.record("connection: \(await list.connection)")
            return
        }
        #expect(event.event == "reset" && event.version == 1 && event.reason.contains("rating"), "\(event)")
    }

    @Test func everyEndIsAValueTheAppSees() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = ClientTests.client(server)
        // Deleted: follow returns why, and connection says it.
        _ = try await client.putSession("gone", SessionCollection.items([Row(id: 1, v: 0)]))
        let deleted = await LiveList<Row>()
        let following = Task { try await deleted.follow("gone", with: client) }
        try await ClientTests.until { @MainActor in deleted.version == 0 && deleted.connection == .live }
        try await client.deleteSession("gone")
        #expect(try await following.value == .deleted)
        #expect(await deleted.connection == .stopped(.deleted))
        // Cancelled.
        _ = try await client.putSession("left", SessionCollection.items([Row(id: 1, v: 0)]))
        let cancelled = await LiveList<Row>()
        let leaving = Task { try await cancelled.follow("left", with: client) }
        try await ClientTests.until { await cancelled.version == 0 }
        leaving.cancel()
        #expect(try await leaving.value == .cancelled)
        #expect(await cancelled.connection == .stopped(.cancelled))
        // Refused: no such session.
        let missing = await LiveList<Row>()
        await #expect(throws: LiveDeltaError.self) { try await missing.follow("nobody", with: client) }
        guard case .stopped(.refused(404, "session_not_found", _)) = await missing.connection else {
            Issue.record("connection: \(await missing.connection)")
            return
        }
    }

    /// Evicted (the store full, the least recently used session goes) and expired (idle past
    /// `--session-idle-timeout`; the hub looks about every 10 s) end `follow` with their value.
    @Test func evictedAndExpiredAreValuesTheAppSees() async throws {
        let server = try ServerProcess(arguments: ["--max-sessions", "2", "--session-idle-timeout", "2"])
        defer { _ = server.stop() }
        let client = ClientTests.client(server)
        _ = try await client.putSession("evicted", SessionCollection.items([Row(id: 1, v: 0)]))
        _ = try await client.putSession("expired", SessionCollection.items([Row(id: 1, v: 0)]))
        let (evicted, expired) = await MainActor.run { (LiveList<Row>(), LiveList<Row>()) }
        let followingEvicted = Task { try await evicted.follow("evicted", with: client) }
        let followingExpired = Task { try await expired.follow("expired", with: client) }
        try await ClientTests.until { @MainActor in evicted.connection == .live && expired.connection == .live }
        _ = try await client.session("expired", as: Row.self)  // the more recently used of the two
        _ = try await client.putSession("newcomer", SessionCollection.items([Row(id: 1, v: 0)]))
        #expect(try await followingEvicted.value == .evicted)
        #expect(await evicted.connection == .stopped(.evicted))
        #expect(try await followingExpired.value == .expired)
        #expect(await expired.connection == .stopped(.expired))
    }

    /// A token the server refuses (401, after the provider was asked again) or one without the
    /// scope to follow (403) stops following with the status and code, thrown and in `connection`.
    @Test func accessRefusedStopsWithItsStatus() async throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("follow-stop-\(UUID().uuidString).key")
        try Data(String(repeating: "s", count: 40).utf8).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }
        let server = try ServerProcess(arguments: ["--auth", "jwt", "--jwt-secret-file", secret.path])
        defer { _ = server.stop() }
        let writer = try hs256Token(secret: secret, scope: "sessions:write sessions:read sessions:subscribe")
        let reader = try hs256Token(secret: secret, scope: "sessions:read")
        _ = try await ClientTests.client(server, token: { _ in writer }).putSession("guarded", SessionCollection.items([Row(id: 1, v: 0)]))
        let asked = Counter()
        for (token, status) in [("not a token", 401), (reader, 403)] {
            let list = await LiveList<Row>()
            let client = ClientTests.client(
                server,
                token: { _ in
                    asked.add()
                    return token
                })
            do {
                try await list.follow("guarded", with: client)
                Issue.record("followed with a token it should not have")
            } catch let error as LiveDeltaError {
                #expect(error.status == status)
            }
            guard case .stopped(.refused(status, _, _)) = await list.connection else {
                Issue.record("connection: \(await list.connection)")
                continue
            }
        }
        #expect(asked.value >= 3, "the provider was asked again after the 401")
    }

    /// An HS256 token for tenant `acme`, signed by openssl (the tests have no JOSE library).
    /// A count shared with a token provider.
    final class Counter: @unchecked Sendable {  // guarded by `lock`
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    @Test func aReplacementsResetSaysSo() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = ClientTests.client(server)
        _ = try await client.putSession("again", SessionCollection.items([Row(id: 1, v: 0)]))
        let list = await LiveList<Row>()
        let journal = Journal()
        let following = Task { @MainActor in
            for try await update in client.follow("again", as: Row.self) { journal.note(update, taken: list.take(update)) }
        }
        defer { following.cancel() }
        try await ClientTests.until { await list.version == 0 }
        _ = try await client.putSession("again", SessionCollection.items([Row(id: 2, v: 0)]))
        try await ClientTests.until { await list.items == [Row(id: 2, v: 0)] }
        #expect(journal.all.filter { $0.hasPrefix("reset") } == ["reset to 0 (start)", "reset to 0 (replaced)"], "\(journal.all)")
    }

    /// A long poll's page goes through `JSONValue`: an id past 2^53 reaches the list with every
    /// digit (it came back rounded through `Double`).
    @Test func aLongPollKeepsEveryDigitOfAnId() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = ClientTests.client(server)
        let big = 9_007_199_254_740_993
        _ = try await client.putSession("digits", SessionCollection.items([Row(id: 1, v: 0)]))
        let list = await LiveList<Row>()
        var options = FollowOptions()
        options.transport = .longPoll
        options.pollWait = 1
        let following = Task { @MainActor in
            for try await update in client.follow("digits", as: Row.self, options: options) { list.take(update) }
        }
        defer { following.cancel() }
        try await ClientTests.until { await list.version == 0 }
        _ = try await client.update("digits", to: .items([Row(id: big, v: 0), Row(id: 1, v: 0)]))
        try await ClientTests.until { await list.version == 1 }
        #expect(await list.items == [Row(id: big, v: 0), Row(id: 1, v: 0)])
    }

    /// The documented way to follow (docs/clients.md, "Following a session") lets go of its
    /// list: nothing of the client holds it once following stopped, nor does its `onChange`.
    @MainActor @Test func aListFollowedAsDocumentedIsFreedWhenFollowingStops() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = ClientTests.client(server)
        _ = try await client.putSession("freed", SessionCollection.items([Row(id: 1, v: 0)]))
        weak var weakList: LiveList<Row>?
        let seen = Versions()
        let following: Task<FollowStop, any Error>
        do {
            let list = LiveList<Row>()
            list.onChange = { [weak list] _ in
                guard let list else { return }
                seen.append(list.version)
            }
            weakList = list
            following = Task { try await list.follow("freed", with: client) }
        }
        var deadline = Date().addingTimeInterval(20)
        while seen.count == 0, Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        try await client.deleteSession("freed")
        #expect(try await following.value == .deleted)
        // The task that followed lets go of it as it finishes, on another thread.
        deadline = Date().addingTimeInterval(20)
        while weakList != nil, Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(weakList == nil, "the list outlived following")
    }

    /// Session `id` at version 0 followed, for the resume token; then version 1 holding `item`,
    /// and version 2 clean again.
    static func badThenClean(_ id: String, _ item: String, _ server: ServerProcess, _ client: LiveDeltaClient) async throws -> String {
        let token = try await followedToVersionZero(id, client)
        try update(server, id, items: "[\(item),\(clean)]")
        try update(server, id, items: "[\(clean)]")
        return token
    }

    /// Creates session `id` at version 0, follows it there, and gives the resume token.
    static func followedToVersionZero(_ id: String, _ client: LiveDeltaClient) async throws -> String {
        _ = try await client.putSession(id, SessionCollection.items([film]))
        for try await update in client.follow(id, as: Film.self) {
            if case .reset(let state, _) = update, let token = state.eventID { return token }
        }
        throw CancellationError()
    }

    /// Updates session `id` to the items' text as it stands (no Swift type can write them all).
    static func update(_ server: ServerProcess, _ id: String, items: String) throws {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/sessions/\(id)/update")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"items":\#(items)}"#.utf8)
        let done = DispatchSemaphore(value: 0)
        let status = LockedStatus()
        URLSession.shared.dataTask(with: request) { body, response, _ in
            status.set((response as? HTTPURLResponse)?.statusCode ?? 0, body ?? Data())
            done.signal()
        }.resume()
        done.wait()
        let (code, body) = status.value
        guard code == 200 else { throw LiveDeltaError(status: code, code: "update", message: String(decoding: body, as: UTF8.self)) }
    }
}

/// An answer handed from URLSession's queue to the test.
private final class LockedStatus: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var answer: (Int, Data) = (0, Data())
    func set(_ code: Int, _ body: Data) { lock.withLock { answer = (code, body) } }
    var value: (Int, Data) { lock.withLock { answer } }
}
