import LiveDeltaService
import RedisClient
import Synchronization

/// Which sessions sources feed, and which replica evaluates each, in Redis beside the
/// sessions: every replica refuses HTTP writes to a fed session, and when the replica that
/// evaluates a session dies its lease lapses and another takes the session over.
///
/// One hash, `<prefix>sources`, of each fed session's store id to its binding's record; one,
/// `<prefix>sources:problems`, of those whose source's last result was not committed to why;
/// and one string a fed session, `<prefix>{<id>}:source`, naming the replica that holds its
/// lease, which lapses `lease` after its last renewal. A lease only spares the database and
/// the store work: two replicas that both think they hold one (a replica paused past its
/// lease) still commit no version twice, as each commit is conditioned on the version it
/// evaluated from.
package final class RedisSourceLeases: SourceLeases {
    private let redis: any RedisCommands
    private let layout: RedisSessionLayout
    private let bindings: [UInt8]
    private let problemsKey: [UInt8]
    /// This replica, as the leases name it.
    private let replica: String
    private let leaseMilliseconds: String
    package let renewal: Duration
    /// Where the next look for bindings nobody holds goes on from (`HSCAN`'s cursor).
    private let cursor = Mutex("0")

    package init(redis: any RedisCommands, keyPrefix: String = "livedelta:", renewal: Duration = .seconds(1), lease: Duration = .seconds(5)) {
        self.redis = redis
        layout = RedisSessionLayout(prefix: keyPrefix)
        bindings = Array((keyPrefix + "sources").utf8)
        problemsKey = Array((keyPrefix + "sources:problems").utf8)
        var generator = SystemRandomNumberGenerator()
        replica = String(generator.next(), radix: 36)
        self.renewal = renewal
        let (seconds, attoseconds) = lease.components
        leaseMilliseconds = String(max(1, Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000)))
    }

    private func leaseKey(_ id: String) -> [UInt8] { layout.key(id) + Array(":source".utf8) }

    package func bind(_ id: String, record: [UInt8]) throws(SourceLeaseError) {
        // A binding made anew (the session created again from a source) starts with no problem.
        try run([
            ["HSET", .bytes(bindings), .text(id), .bytes(record)],
            ["HDEL", .bytes(problemsKey), .text(id)],
            ["SET", .bytes(leaseKey(id)), .text(replica), "PX", .text(leaseMilliseconds)],
        ])
    }

    package func unbind(_ id: String, record: [UInt8]?) {
        _ = try? run([
            script(Self.unbind, id, [.text(id), record.map { .bytes(Array("=".utf8) + $0) } ?? .text("")])
        ])
    }

    package func record(of id: String) throws(SourceLeaseError) -> [UInt8]? {
        try run([["HGET", .bytes(bindings), .text(id)]])[0].bytes
    }

    package func report(_ id: String, problem: [UInt8]?) throws(SourceLeaseError) {
        if let problem {
            try run([["HSET", .bytes(problemsKey), .text(id), .bytes(problem)]])
        } else {
            try run([["HDEL", .bytes(problemsKey), .text(id)]])
        }
    }

    package func problem(of id: String) throws(SourceLeaseError) -> [UInt8]? {
        try run([["HGET", .bytes(problemsKey), .text(id)]])[0].bytes
    }

    package func problems() throws(SourceLeaseError) -> [String: [UInt8]] {
        let fields = try run([["HGETALL", .bytes(problemsKey)]])[0].array ?? []
        var problems: [String: [UInt8]] = [:]
        for index in stride(from: 0, to: fields.count - 1, by: 2) {
            if let id = fields[index].bytes, let problem = fields[index + 1].bytes { problems[String(decoding: id, as: UTF8.self)] = problem }
        }
        return problems
    }

    package func renew(_ held: [String]) throws(SourceLeaseError) -> (lost: [String], taken: [(id: String, record: [UInt8])]) {
        var lost: [String] = []
        if !held.isEmpty {
            let kept = try run(held.map { script(Self.renew, $0, [.text($0), .text(replica), .text(leaseMilliseconds)]) })
            lost = zip(held, kept).filter { $0.1.integer != 1 }.map(\.0)
        }
        // A page of the bindings a round: every binding is looked at within a few rounds
        // however many there are, and each round's work stays bounded.
        let page = try run([["HSCAN", .bytes(bindings), .text(cursor.withLock { $0 }), "COUNT", "1000"]])[0].array ?? []
        guard page.count == 2, let next = page[0].bytes, let fields = page[1].array else {
            throw SourceLeaseError("Redis answered HSCAN with something else than a cursor and fields")
        }
        cursor.withLock { $0 = String(decoding: next, as: UTF8.self) }
        let mine = Set(held)
        var candidates: [String] = []
        for index in stride(from: 0, to: fields.count - 1, by: 2) {
            if let id = fields[index].bytes.map({ String(decoding: $0, as: UTF8.self) }), !mine.contains(id) { candidates.append(id) }
        }
        guard !candidates.isEmpty else { return (lost, []) }
        let answers = try run(candidates.map { script(Self.take, $0, [.text($0), .text(replica), .text(leaseMilliseconds)]) })
        let taken = zip(candidates, answers).compactMap { id, answer in answer.bytes.map { (id: id, record: $0) } }
        return (lost, taken)
    }

    // MARK: - Redis

    private func script(_ text: String, _ id: String, _ arguments: [RedisArgument]) -> [RedisArgument] {
        ["EVAL", .text(text), "4", .bytes(bindings), .bytes(leaseKey(id)), .bytes(layout.key(id)), .bytes(problemsKey)] + arguments
    }

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

    // KEYS: the bindings, the session's lease, the session, the problems. ARGV: its store id,
    // then as each says.

    /// ARGV[2]: "" to drop the binding whatever it is, or "=" and the record it must still be.
    private static let unbind = """
        if ARGV[2] == '' or '=' .. (redis.call('HGET', KEYS[1], ARGV[1]) or '') == ARGV[2] then
          redis.call('HDEL', KEYS[1], ARGV[1])
          redis.call('HDEL', KEYS[4], ARGV[1])
          redis.call('DEL', KEYS[2])
        end
        return 0
        """

    /// A session gone (deleted elsewhere, expired) takes its binding with it.
    private static let gone = """
        if redis.call('EXISTS', KEYS[3]) == 0 then
          redis.call('HDEL', KEYS[1], ARGV[1])
          redis.call('HDEL', KEYS[4], ARGV[1])
          redis.call('DEL', KEYS[2])
          return 0
        end

        """

    /// ARGV[2]: this replica, ARGV[3]: the lease in ms. 1 where this replica holds the lease
    /// on (again, where it had lapsed and nobody took it), else 0.
    private static let renew =
        gone + """
            if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
            local holder = redis.call('GET', KEYS[2])
            if holder and holder ~= ARGV[2] then return 0 end
            redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
            return 1
            """

    /// As `renew`; the binding's record where this replica took the lease, else 0.
    private static let take =
        gone + """
            local record = redis.call('HGET', KEYS[1], ARGV[1])
            if not record or not redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then return 0 end
            return record
            """
}
