import LiveDeltaService
import RedisClient
import Synchronization

/// Which sessions sources feed, and which replica evaluates each, in Redis beside the
/// sessions: every replica refuses HTTP writes to a fed session, and when the replica that
/// evaluates a session dies its lease lapses and another takes the session over.
///
/// On one Redis: one hash, `<prefix>sources`, of each fed session's store id to its binding's
/// record; one, `<prefix>sources:problems`, of those whose source's last result was not
/// committed to why; and one string a fed session, `<prefix>{<id>}:source`, naming the replica
/// that holds its lease, which lapses `lease` after its last renewal. On a cluster, where a
/// script may touch one slot only, the record and the problem are strings in the session's
/// slot (`<prefix>{<id>}:binding`, `<prefix>{<id>}:problem`), and two sets in no session's
/// slot, `<prefix>sources:ids` and `<prefix>sources:problems`, list the ids that have them,
/// for the scans: a set may name an id whose strings are gone (it is dropped when found so),
/// never the other way round, as an id is added to a set before its string is written.
/// A lease only spares the database and the store work: two replicas that both think they hold
/// one (a replica paused past its lease) still commit no version twice, as each commit is
/// conditioned on the version it evaluated from.
package final class RedisSourceLeases: SourceLeases {
    private let redis: any RedisCommands
    private let layout: RedisSessionLayout
    private let bindings: [UInt8]
    private let problemsKey: [UInt8]
    private let cluster: Bool
    /// This replica, as the leases name it.
    private let replica: String
    private let leaseMilliseconds: String
    package let renewal: Duration
    /// Where the next look for bindings nobody holds goes on from (`HSCAN`'s or `SSCAN`'s cursor).
    private let cursor = Mutex("0")

    package init(redis: any RedisCommands, keyPrefix: String = "livedelta:", renewal: Duration = .seconds(1), lease: Duration = .seconds(5)) {
        self.redis = redis
        layout = RedisSessionLayout(prefix: keyPrefix)
        cluster = redis.isCluster
        bindings = Array((keyPrefix + (redis.isCluster ? "sources:ids" : "sources")).utf8)
        problemsKey = Array((keyPrefix + "sources:problems").utf8)
        var generator = SystemRandomNumberGenerator()
        replica = String(generator.next(), radix: 36)
        self.renewal = renewal
        let (seconds, attoseconds) = lease.components
        leaseMilliseconds = String(max(1, Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000)))
    }

    private func leaseKey(_ id: String) -> [UInt8] { layout.key(id) + Array(":source".utf8) }
    private func recordKey(_ id: String) -> [UInt8] { layout.key(id) + Array(":binding".utf8) }
    private func problemKey(_ id: String) -> [UInt8] { layout.key(id) + Array(":problem".utf8) }

    package func bind(_ id: String, record: [UInt8]) throws(SourceLeaseError) {
        // A binding made anew (the session created again from a source) starts with no problem.
        let lease: [RedisArgument] = ["SET", .bytes(leaseKey(id)), .text(replica), "PX", .text(leaseMilliseconds)]
        guard cluster else {
            try run([["HSET", .bytes(bindings), .text(id), .bytes(record)], ["HDEL", .bytes(problemsKey), .text(id)], lease])
            return
        }
        try run([["SADD", .bytes(bindings), .text(id)]])
        try run([["SET", .bytes(recordKey(id)), .bytes(record)], ["DEL", .bytes(problemKey(id))], lease])
        try run([["SREM", .bytes(problemsKey), .text(id)]])
    }

    package func unbind(_ id: String, record: [UInt8]?) {
        _ = try? run([
            script(Self.unbind, id, [.text(id), record.map { .bytes(Array("=".utf8) + $0) } ?? .text("")])
        ])
        if cluster { forgotten([id]) }
    }

    /// On a cluster, drops from the sets ids whose strings are gone.
    private func forgotten(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        let present = (try? run(ids.map { ["EXISTS", .bytes(recordKey($0))] })) ?? []
        let gone = zip(ids, present).filter { $0.1.integer == 0 }.map { RedisArgument.text($0.0) }
        guard !gone.isEmpty else { return }
        _ = try? run([["SREM", .bytes(bindings)] + gone, ["SREM", .bytes(problemsKey)] + gone])
    }

    package func record(of id: String) throws(SourceLeaseError) -> [UInt8]? {
        try run([cluster ? ["GET", .bytes(recordKey(id))] : ["HGET", .bytes(bindings), .text(id)]])[0].bytes
    }

    package func report(_ id: String, problem: [UInt8]?) throws(SourceLeaseError) {
        switch (cluster, problem) {
        case (false, let problem?): try run([["HSET", .bytes(problemsKey), .text(id), .bytes(problem)]])
        case (false, nil): try run([["HDEL", .bytes(problemsKey), .text(id)]])
        case (true, let problem?):
            try run([["SADD", .bytes(problemsKey), .text(id)]])
            try run([["SET", .bytes(problemKey(id)), .bytes(problem)]])
        case (true, nil):
            try run([["DEL", .bytes(problemKey(id))]])
            try run([["SREM", .bytes(problemsKey), .text(id)]])
        }
    }

    package func problem(of id: String) throws(SourceLeaseError) -> [UInt8]? {
        try run([cluster ? ["GET", .bytes(problemKey(id))] : ["HGET", .bytes(problemsKey), .text(id)]])[0].bytes
    }

    package func problems() throws(SourceLeaseError) -> [String: [UInt8]] {
        var problems: [String: [UInt8]] = [:]
        guard cluster else {
            let fields = try run([["HGETALL", .bytes(problemsKey)]])[0].array ?? []
            for index in stride(from: 0, to: fields.count - 1, by: 2) {
                if let id = fields[index].bytes, let problem = fields[index + 1].bytes { problems[String(decoding: id, as: UTF8.self)] = problem }
            }
            return problems
        }
        let ids = (try run([["SMEMBERS", .bytes(problemsKey)]])[0].array ?? []).compactMap { $0.bytes.map { String(decoding: $0, as: UTF8.self) } }
        guard !ids.isEmpty else { return [:] }
        for (id, problem) in zip(ids, try run(ids.map { ["GET", .bytes(problemKey($0))] })) {
            if let problem = problem.bytes { problems[id] = problem }
        }
        return problems
    }

    package func renew(_ held: [String]) throws(SourceLeaseError) -> (lost: [String], taken: [(id: String, record: [UInt8])]) {
        var lost: [String] = []
        if !held.isEmpty {
            let kept = try run(held.map { script(Self.renew, $0, [.text($0), .text(replica), .text(leaseMilliseconds)]) })
            lost = zip(held, kept).filter { $0.1.integer != 1 }.map(\.0)
            if cluster { forgotten(zip(held, kept).filter { $0.1.integer == Self.goneAnswer }.map(\.0)) }
        }
        // A page of the bindings a round: every binding is looked at within a few rounds
        // however many there are, and each round's work stays bounded.
        let scan: RedisArgument = cluster ? "SSCAN" : "HSCAN"
        let page = try run([[scan, .bytes(bindings), .text(cursor.withLock { $0 }), "COUNT", "1000"]])[0].array ?? []
        guard page.count == 2, let next = page[0].bytes, let fields = page[1].array else {
            throw SourceLeaseError("Redis answered \(scan) with something else than a cursor and fields")
        }
        cursor.withLock { $0 = String(decoding: next, as: UTF8.self) }
        let mine = Set(held)
        var candidates: [String] = []
        // A hash's page is its fields and values; a set's, its members.
        for index in stride(from: 0, to: fields.count, by: cluster ? 1 : 2) {
            if let id = fields[index].bytes.map({ String(decoding: $0, as: UTF8.self) }), !mine.contains(id) { candidates.append(id) }
        }
        guard !candidates.isEmpty else { return (lost, []) }
        let answers = try run(candidates.map { script(Self.take, $0, [.text($0), .text(replica), .text(leaseMilliseconds)]) })
        if cluster { forgotten(zip(candidates, answers).filter { $0.1.integer == Self.goneAnswer }.map(\.0)) }
        let taken = zip(candidates, answers).compactMap { id, answer in answer.bytes.map { (id: id, record: $0) } }
        return (lost, taken)
    }

    // MARK: - Redis

    /// KEYS: where the binding's record is, the session's lease, the session, where its
    /// problem is; `binding()` and `forget()`, defined first, read and drop the binding as
    /// each layout keeps it.
    private func script(_ text: String, _ id: String, _ arguments: [RedisArgument]) -> [RedisArgument] {
        guard cluster else {
            return ["EVAL", .text(Self.hashed + text), "4", .bytes(bindings), .bytes(leaseKey(id)), .bytes(layout.key(id)), .bytes(problemsKey)]
                + arguments
        }
        return ["EVAL", .text(Self.slotted + text), "4", .bytes(recordKey(id)), .bytes(leaseKey(id)), .bytes(layout.key(id)), .bytes(problemKey(id))]
            + arguments
    }

    /// One Redis: the bindings and problems are hashes by store id.
    private static let hashed = """
        local function binding() return redis.call('HGET', KEYS[1], ARGV[1]) end
        local function forget()
          redis.call('HDEL', KEYS[1], ARGV[1])
          redis.call('HDEL', KEYS[4], ARGV[1])
        end

        """

    /// A cluster: they are strings in the session's slot.
    private static let slotted = """
        local function binding() return redis.call('GET', KEYS[1]) end
        local function forget() redis.call('DEL', KEYS[1], KEYS[4]) end

        """

    /// What `renew` and `take` answer where the session is gone.
    private static let goneAnswer = -1

    @discardableResult
    private func run(_ commands: [[RedisArgument]]) throws(SourceLeaseError) -> [RedisValue] {
        let replies: [RedisValue]
        do {
            replies = try redis.run(commands)
        } catch {
            throw SourceLeaseError(error.description)
        }
        for reply in replies {
            if case .error(let message) = reply { throw SourceLeaseError("Redis answered: \(message)") }
        }
        return replies
    }

    // KEYS and the functions before each: as `script` says. ARGV: its store id, then as each
    // says.

    /// ARGV[2]: "" to drop the binding whatever it is, or "=" and the record it must still be.
    private static let unbind = """
        if ARGV[2] == '' or '=' .. (binding() or '') == ARGV[2] then
          forget()
          redis.call('DEL', KEYS[2])
        end
        return 0
        """

    /// A session gone (deleted elsewhere, expired) takes its binding with it: `goneAnswer`.
    private static let gone = """
        if redis.call('EXISTS', KEYS[3]) == 0 then
          forget()
          redis.call('DEL', KEYS[2])
          return \(goneAnswer)
        end

        """

    /// ARGV[2]: this replica, ARGV[3]: the lease in ms. 1 where this replica holds the lease
    /// on (again, where it had lapsed and nobody took it), else 0.
    private static let renew =
        gone + """
            if not binding() then return 0 end
            local holder = redis.call('GET', KEYS[2])
            if holder and holder ~= ARGV[2] then return 0 end
            redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
            return 1
            """

    /// As `renew`; the binding's record where this replica took the lease, else 0.
    private static let take =
        gone + """
            local record = binding()
            if not record or not redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then return 0 end
            return record
            """
}
