import LiveDeltaService
import Logging
import RedisClient
import Synchronization

/// Sessions' bytes in Redis (see `RedisSessionLayout`), committed by the scripts in
/// `RedisScripts`.
final class RedisSharedStorage: SharedStorage {
    private let redis: any RedisCommands
    private let layout: RedisSessionLayout
    private let quotas: RedisTenantQuotas
    /// On a cluster, where a tenant's count and its sessions are in different slots: quotas
    /// counted in steps around each commit.
    private let reservations: RedisTenantReservations?
    /// Milliseconds, as Redis takes a TTL.
    private let ttl: String
    private let logger: Logger
    private let events: @Sendable (SessionEvent) -> Void
    /// Whether the last pipeline failed: the log says when Redis goes and comes back, not on
    /// every request in between.
    private let failing = Atomic<Bool>(false)
    /// The subscription `listen` started, until `stopListening`.
    private let listening = Mutex<(any RedisListening)?>(nil)
    /// Parts' id-hash lists read for keyset windows, kept.
    private let idLists = IDListCache()

    init(
        redis: any RedisCommands, keyPrefix: String, idleTimeout: Duration, tenantQuotas: (sessions: Int, bytes: Int), logger: Logger,
        events: @escaping @Sendable (SessionEvent) -> Void
    ) {
        self.redis = redis
        layout = RedisSessionLayout(prefix: keyPrefix)
        quotas = RedisTenantQuotas(maxSessions: tenantQuotas.sessions, maxBytes: tenantQuotas.bytes, layout: layout)
        reservations = redis.isCluster ? RedisTenantReservations(quotas: quotas) : nil
        let (seconds, attoseconds) = idleTimeout.components
        ttl = String(max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
        self.logger = logger
        self.events = events
    }

    var isReady: Bool { (try? redis.run(["PING"])) == .status("PONG") }

    func version(of id: String, via staged: (any StagedData)?) throws(SessionError) -> (version: UInt64, incarnation: String)? {
        let key = RedisArgument.bytes(layout.key(id))
        let replies = try run([["HMGET", key, "v", "g"], ["PEXPIRE", key, .text(ttl)]], on: Self.lease(staged))
        guard let fields = replies[0].array, fields.count == 2, let version = fields[0].integer else { return nil }
        return (UInt64(version), fields[1].bytes.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    func read(_ id: String, via staged: (any StagedData)?) throws(SessionError) -> StoredSession? {
        let key = RedisArgument.bytes(layout.key(id))
        let replies = try run([["HGETALL", key], ["PEXPIRE", key, .text(ttl)]], on: Self.lease(staged))
        let fields = Self.fields(replies[0])
        if fields[Array("m".utf8)] == nil, let data = fields[Array("d".utf8)],
            let version = fields[Array("v".utf8)].flatMap({ UInt64(String(decoding: $0, as: UTF8.self)) }), let options = fields[Array("o".utf8)]
        {
            // Stored whole by an earlier version; parts at its next commit.
            return StoredSession(
                version: version, incarnation: fields[Array("g".utf8)].map { String(decoding: $0, as: UTF8.self) } ?? "", options: options,
                data: data)
        }
        guard let parted = try Self.parted(fields, id: id) else { return nil }
        guard let stored = parted.stored else { throw .storeUnavailable("the stored session \(id) lacks a part") }
        return stored
    }

    func readUnits(_ id: String, _ units: (Int) -> Range<Int>) throws(SessionError) -> StoredUnits? {
        // Parts are read after their manifest, with the version and life again: a commit
        // between the two (which may drop a part, or start a life whose part names repeat the
        // last one's) has the read tried again.
        for _ in 0..<3 {
            guard let head = try head(id) else { return nil }
            if let read = try self.units(id, head, units(head.count)) { return read }
        }
        return nil
    }

    func readUnits(
        _ id: String, anchoredBy needle: (StoredShape, _ options: [UInt8]) -> UInt32?, _ place: (StoredUnits) -> Range<Int>?
    ) throws(SessionError) -> AnchoredUnits {
        for _ in 0..<3 {
            guard let head = try head(id), let hash = needle(head.shape, head.options) else { return .unanswered }
            if let found = try anchored(id, head, hash, place) { return found }
        }
        return .unanswered
    }

    /// Parts whose id-hash lists are read at a time: a million items' lists are 4 MB, and a
    /// window's anchor is found after half of them on average.
    private static let listsARead = 512

    /// The window of the part whose ids' hashes hold `hash` and whose units hold the anchor
    /// (`place`); nil where the session moved on from `head` meanwhile (to be tried again).
    private func anchored(_ id: String, _ head: Head, _ hash: UInt32, _ place: (StoredUnits) -> Range<Int>?) throws(SessionError)
        -> AnchoredUnits?
    {
        // The lists come here and are searched here: in a Lua script, Redis took 14 ms to load
        // the 4 MB of a million items' lists, and everyone else waited. Those read before are
        // kept, and only the lists of parts written since are read.
        if let ordered = idLists.ordered(id, incarnation: head.incarnation, version: head.version), ordered.count == head.parts.count {
            var first = 0
            for (part, list) in zip(head.parts, ordered) {
                defer { first += part.count }
                guard Self.holds(list, hash) else { continue }
                if let found = try window(id, head, in: first..<first + part.count, place) { return found }
            }
            return .unanswered
        }
        let key = RedisArgument.bytes(layout.key(id))
        var lists = idLists.lists(id, incarnation: head.incarnation)
        defer { idLists.keep(id, incarnation: head.incarnation, lists, parts: head.parts.map(\.name), version: head.version) }
        var first = 0
        for chunk in stride(from: 0, to: head.parts.count, by: Self.listsARead) {
            let parts = head.parts[chunk..<min(head.parts.count, chunk + Self.listsARead)]
            let missing = parts.filter { lists[$0.name] == nil }
            if !missing.isEmpty {
                let read = try run([["HMGET", key, "v", "g"] + missing.map { .bytes(RedisSessionLayout.idsField($0.name)) }])[0].array ?? []
                guard read.count == missing.count + 2, read[0].bytes == head.version, read[1].bytes == head.incarnation else { return nil }
                for (part, list) in zip(missing, read.dropFirst(2)) {
                    // A part without its list (written by an earlier LiveDelta): read whole.
                    guard let list = list.bytes, list.count == part.count * 4 else { return .unanswered }
                    lists[part.name] = list
                }
            }
            for part in parts {
                defer { first += part.count }
                // Most needles are in one part; in one more where 32 bits of two ids agree.
                guard let list = lists[part.name], Self.holds(list, hash) else { continue }
                if let found = try window(id, head, in: first..<first + part.count, place) { return found }
            }
        }
        return .unanswered
    }

    /// The window of a part (its units `span`) whose ids' hashes hold the needle, where its
    /// units hold the anchor; `.some(nil)` where the session moved on from `head`, nil where
    /// the part does not hold the anchor after all (32 bits of two ids agree).
    private func window(_ id: String, _ head: Head, in span: Range<Int>, _ place: (StoredUnits) -> Range<Int>?) throws(SessionError)
        -> AnchoredUnits??
    {
        guard let candidate = try units(id, head, span) else { return .some(nil) }
        guard let wanted = place(candidate) else { return nil }
        // Most windows are in their anchor's part: read already.
        if wanted.lowerBound >= span.lowerBound && wanted.upperBound <= span.upperBound { return .read(candidate) }
        return .some(try units(id, head, wanted).map(AnchoredUnits.read))
    }

    /// Whether a list of 32-bit id hashes (little-endian) holds `hash`.
    private static func holds(_ list: [UInt8], _ hash: UInt32) -> Bool {
        list.withUnsafeBytes { bytes in
            stride(from: 0, to: bytes.count - 3, by: 4).contains { bytes.loadUnaligned(fromByteOffset: $0, as: UInt32.self) == hash.littleEndian }
        }
    }

    /// What a read of some parts starts from: the session's version, life, options, shape and
    /// parts, and the units and items they hold.
    private struct Head {
        /// As stored, to compare with later reads, and as a number.
        var version: [UInt8]
        var versionNumber: UInt64
        var incarnation: [UInt8]?
        var options: [UInt8]
        var shape: StoredShape
        var parts: [StoredPart]
        var count: Int
        var items: Int
    }

    /// The session's head; nil where there is none, or it is stored whole or without what a
    /// window's answer needs.
    private func head(_ id: String) throws(SessionError) -> Head? {
        let key = RedisArgument.bytes(layout.key(id))
        let replies = try run([["HMGET", key, "v", "g", "o", "s", "m", "n"], ["PEXPIRE", key, .text(ttl)]])
        guard let fields = replies[0].array, fields.count == 6, let version = fields[0].bytes,
            let versionNumber = UInt64(String(decoding: version, as: UTF8.self)),
            let options = fields[2].bytes, let shape = fields[3].bytes.flatMap({ StoredShape(rawValue: String(decoding: $0, as: UTF8.self)) }),
            let manifest = fields[4].bytes
        else { return nil }
        guard let parts = RedisSessionLayout.parts(manifest) else {
            throw .storeUnavailable("the stored session \(id) has a manifest that cannot be read")
        }
        let count = parts.reduce(0) { $0 + $1.count }
        // A sectioned session's parts count sections: its items are counted beside them, and
        // one stored without that count (by an earlier LiveDelta) is read whole.
        guard let items = shape == .flat ? count : RedisSessionLayout.itemCount(fields[5].bytes, manifest: manifest) else { return nil }
        return Head(
            version: version, versionNumber: versionNumber, incarnation: fields[1].bytes, options: options, shape: shape, parts: parts, count: count,
            items: items)
    }

    /// The parts from the one holding unit `wanted.lowerBound` to the one holding its last;
    /// nil where the session has moved on from `head` meanwhile.
    private func units(_ id: String, _ head: Head, _ wanted: Range<Int>) throws(SessionError) -> StoredUnits? {
        var (first, end) = (0, 0)
        var chosen: [StoredPart] = []
        for part in head.parts {
            if end + part.count <= wanted.lowerBound {
                end += part.count
                first = end
                continue
            }
            if end >= wanted.upperBound { break }
            chosen.append(part)
            end += part.count
        }
        let read = try run([["HMGET", .bytes(layout.key(id)), "v", "g"] + chosen.map { RedisArgument.bytes(RedisSessionLayout.field($0.name)) }])
        let values = read[0].array ?? []
        guard values.count == chosen.count + 2, values[0].bytes == head.version, values[1].bytes == head.incarnation else { return nil }
        let texts = values.dropFirst(2).compactMap(\.bytes)
        guard texts.count == chosen.count else { return nil }
        let shape = head.shape
        var data = Array(UnsafeBufferPointer(start: shape.opening.utf8Start, count: shape.opening.utf8CodeUnitCount))
        data.reserveCapacity(texts.reduce(16) { $0 + $1.count + 1 })
        for (index, text) in texts.enumerated() {
            if index > 0 { data.append(UInt8(ascii: ",")) }
            data += text
        }
        data += UnsafeBufferPointer(start: shape.closing.utf8Start, count: shape.closing.utf8CodeUnitCount)
        return StoredUnits(
            version: head.versionNumber,
            incarnation: head.incarnation.map { String(decoding: $0, as: UTF8.self) } ?? "",
            options: head.options, data: data, first: first, count: head.count, items: head.items)
    }

    func readParts(_ id: String) throws(SessionError) -> PartedSession? {
        try Self.parted(Self.fields(try run([["HGETALL", .bytes(layout.key(id))]])[0]), id: id)
    }

    /// A hash's fields by name.
    private static func fields(_ reply: RedisValue) -> [[UInt8]: [UInt8]] {
        var fields: [[UInt8]: [UInt8]] = [:]
        let values = reply.array ?? []
        for index in stride(from: 0, to: values.count - 1, by: 2) {
            if let name = values[index].bytes, let value = values[index + 1].bytes { fields[name] = value }
        }
        return fields
    }

    /// A session's hash as parts; nil where there is no session, or it is stored whole.
    private static func parted(_ fields: [[UInt8]: [UInt8]], id: String) throws(SessionError) -> PartedSession? {
        func field(_ name: String) -> [UInt8]? { fields[Array(name.utf8)] }
        guard let version = field("v").flatMap({ UInt64(String(decoding: $0, as: UTF8.self)) }), let options = field("o"),
            let manifest = field("m")
        else { return nil }
        let incarnation = field("g").map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard let parts = RedisSessionLayout.parts(manifest),
            let shape = field("s").flatMap({ StoredShape(rawValue: String(decoding: $0, as: UTF8.self)) })
        else { throw .storeUnavailable("the stored session \(id) has a manifest that cannot be read") }
        var texts: [String: [UInt8]] = [:]
        texts.reserveCapacity(parts.count)
        for part in parts {
            guard let text = fields[RedisSessionLayout.field(part.name)] else {
                throw .storeUnavailable("the stored session \(id) lacks its part \(part.name)")
            }
            texts[part.name] = text
        }
        return PartedSession(version: version, incarnation: incarnation, options: options, shape: shape, manifest: parts, texts: texts)
    }

    func options(of id: String) -> [UInt8]? {
        (try? redis.run([["HGET", .bytes(layout.key(id)), "o"]]))?.first?.bytes
    }

    /// A collection written beside its session, and where: on a connection of the request's
    /// own where one was free, which then carries the request's later commands (so the write
    /// goes on while the request diffs, and is sure to land before its commit); else on any.
    final class Staged: StagedData {
        let key: [UInt8]
        let lease: RedisLease?
        var committed = false

        init(key: [UInt8], lease: RedisLease?) {
            self.key = key
            self.lease = lease
        }
    }

    private static func lease(_ staged: (any StagedData)?) -> RedisLease? { (staged as? Staged)?.lease }

    func stage(_ id: String, _ parts: PartPlan) throws(SessionError) -> any StagedData {
        let key = layout.nextKey(id)
        let commands = Self.writing(parts, to: key)
        guard let lease = redis.lease(near: key) else {
            _ = try run(commands)
            return Staged(key: key, lease: nil)
        }
        // Sent, not waited for: the replies are read, and checked, with the next pipeline.
        do throws(RedisError) {
            try lease.send(commands)
        } catch {
            throw failure(error)
        }
        return Staged(key: key, lease: lease)
    }

    func finish(_ staged: any StagedData) {
        guard let staged = staged as? Staged else { return }
        defer { staged.lease?.release() }
        guard !staged.committed else { return }
        let drop: [[RedisArgument]] = [["DEL", .bytes(staged.key)]]
        if (try? run(drop, on: staged.lease)) == nil, staged.lease != nil { _ = try? run(drop) }
    }

    func commit(
        _ id: String, version: UInt64, incarnation: String, options: [UInt8], data: CommitData, expecting expected: StoredExpectation,
        step: StoredStep, footprint: Int
    ) throws(SessionError) -> CommitOutcome {
        let commit = { (account: (keys: [[UInt8]], arguments: [RedisArgument])?) throws(SessionError) -> CommitOutcome in
            try self.commit(
                id, version: version, incarnation: incarnation, options: options, data: data, expecting: expected, step: step,
                footprint: footprint, account: account)
        }
        guard let reservations else { return try commit(quotas.account(id, footprint: footprint, ttl: ttl)) }
        guard let reservation = try reservations.reserve(id, footprint: footprint, ttl: ttl, run: runner) else { return try commit(nil) }
        let outcome: CommitOutcome
        do {
            outcome = try commit(nil)
        } catch {
            // Refused (its key's claim taken over): nothing was written. Anything else may have
            // been, and stays counted.
            if case .refused = error { reservations.settle(reservation, committed: false, run: runner) }
            throw error
        }
        let committed = if case .committed = outcome { true } else { false }
        reservations.settle(reservation, committed: committed, run: runner)
        return outcome
    }

    /// `run` for the reservations' steps.
    private var runner: ([[RedisArgument]]) throws(SessionError) -> [RedisValue] {
        { commands throws(SessionError) in try self.run(commands) }
    }

    /// A commit, counted by `account`'s wrapper where it is given.
    private func commit(
        _ id: String, version: UInt64, incarnation: String, options: [UInt8], data: CommitData, expecting expected: StoredExpectation,
        step: StoredStep, footprint: Int, account: (keys: [[UInt8]], arguments: [RedisArgument])?
    ) throws(SessionError) -> CommitOutcome {
        let (expectedVersion, expectedIncarnation) =
            switch expected {
            case .absent: ("", "")
            case .any: ("*", "")
            case .version(let number, let incarnation): (String(number), incarnation)
            }
        var commands: [[RedisArgument]] = []
        let next: [UInt8]
        switch data {
        case .staged(let staged):
            guard let staged = staged as? Staged else { throw .internalFailure("staged data from another storage") }
            next = staged.key
        case .parts(let parts) where parts.whole:
            next = layout.nextKey(id)
            commands = Self.writing(parts, to: next)
        case .parts(let parts):
            guard case .version(let number, let incarnation) = expected else {
                throw .internalFailure("a commit of some parts of session \(id) expects no version")
            }
            return try patch(
                id, version: version, options: options, parts: parts, expecting: (number, incarnation), step: step, account: account)
        }
        let keep = if case .staged = data { "1" } else { "0" }
        commands.append(
            script(
                RedisScripts.commit, keys: [layout.key(id), next, layout.logKey(id), layout.followKey(id)],
                arguments: [expectedVersion, expectedIncarnation, ttl, String(version), incarnation, keep].map(RedisArgument.text) + [.bytes(options)]
                    + [step.rawValue, String(logLength)].map(RedisArgument.text) + [.bytes(channel(id))]
                    + [id, footprint <= Self.loggedWhole ? "1" : "0"].map(RedisArgument.text),
                account: account))
        let staged: Staged? = if case .staged(let staged) = data { staged as? Staged } else { nil }
        let reply = try run(commands, on: staged?.lease, writes: true).last!
        let parts = reply.array ?? []
        let stored = parts.count > 1 ? parts[1].integer.map(UInt64.init) : nil
        switch parts.first?.integer {
        case 1:
            staged?.committed = true
            return .committed(previous: stored)
        case 0: return .conflict(current: stored)
        case Self.claimTakenOver: throw Self.claimTakenOverError()
        case RedisTenantQuotas.refused:
            // The new value was written in this pipeline, not staged: no one else drops it.
            if staged == nil { _ = try? run([["DEL", .bytes(next)]]) }
            throw RedisTenantQuotas.refusal(parts)
        default: throw .storeUnavailable("the new value for session \(id) was lost from Redis before its commit")
        }
    }

    /// The largest session (as `SessionFootprint` counts it) whose collection, written whole,
    /// is logged whole for other replicas: from its text they take the step exactly, even where
    /// more commits follow at once. A larger one is logged as to be read: copying it into the
    /// log would hold Redis for everyone, and a replica that reads it after a later commit
    /// has its subscribers reset.
    private static let loggedWhole = 1 << 20

    /// Writes a whole collection's parts to a key of their own, expiring in a minute so that
    /// they do not linger should this process die before a commit takes them.
    private static func writing(_ parts: PartPlan, to key: [UInt8]) -> [[RedisArgument]] {
        let manifest = RedisSessionLayout.manifest(parts.manifest)
        var set: [RedisArgument] = ["HSET", .bytes(key), "s", .text(parts.shape.rawValue), "m", .bytes(manifest)]
        if parts.shape == .sectioned { set += ["n", .bytes(RedisSessionLayout.itemCount(parts.items, manifest: manifest))] }
        set.reserveCapacity(set.count + parts.written.count * 4)
        for part in parts.written { set += [.bytes(RedisSessionLayout.field(part.name)), .borrowed(part.text)] }
        for (part, ids) in zip(parts.written, parts.writtenIDs) { set += [.bytes(RedisSessionLayout.idsField(part.name)), .bytes(ids)] }
        return [set, ["PEXPIRE", .bytes(key), "60000"]]
    }

    /// Commits the parts a change rewrote, and drops those it replaced, in place.
    private func patch(
        _ id: String, version: UInt64, options: [UInt8], parts: PartPlan, expecting expected: (version: UInt64, incarnation: String),
        step: StoredStep, account: (keys: [[UInt8]], arguments: [RedisArgument])?
    ) throws(SessionError) -> CommitOutcome {
        let manifest = RedisSessionLayout.manifest(parts.manifest)
        var arguments: [RedisArgument] =
            [String(expected.version), expected.incarnation, ttl, String(version)].map(RedisArgument.text) + [.bytes(options)]
            + [step.rawValue, String(logLength)].map(RedisArgument.text) + [.bytes(channel(id)), .text(id)]
            + [.bytes(manifest), .text(String(parts.removed.count))]
            + [.bytes(parts.shape == .sectioned ? RedisSessionLayout.itemCount(parts.items, manifest: manifest) : [])]
            + [.text(String(min(parts.writtenIDs.count, parts.written.count)))]
        arguments.reserveCapacity(arguments.count + parts.removed.count + parts.written.count * 4)
        arguments += parts.removed.map { .bytes(RedisSessionLayout.field($0)) }
        for (part, ids) in zip(parts.written, parts.writtenIDs) { arguments += [.bytes(RedisSessionLayout.idsField(part.name)), .bytes(ids)] }
        for part in parts.written { arguments += [.bytes(RedisSessionLayout.field(part.name)), .borrowed(part.text)] }
        let reply = try run(
            [script(RedisScripts.patch, keys: [layout.key(id), layout.logKey(id), layout.followKey(id)], arguments: arguments, account: account)],
            writes: true)[0]
        let replies = reply.array ?? []
        let stored = replies.count > 1 ? replies[1].integer.map(UInt64.init) : nil
        if replies.first?.integer == Self.claimTakenOver { throw Self.claimTakenOverError() }
        if replies.first?.integer == RedisTenantQuotas.refused { throw RedisTenantQuotas.refusal(replies) }
        return replies.first?.integer == 1 ? .committed(previous: stored) : .conflict(current: stored)
    }

    func delete(_ id: String, expectingVersion version: UInt64?) throws(SessionError) -> DeleteOutcome {
        let score = reservations?.score(id, run: runner)
        let reply = try run(
            [
                script(
                    RedisScripts.delete, keys: [layout.key(id), layout.logKey(id), layout.followKey(id)],
                    arguments: [.text(version.map(String.init) ?? "*"), .bytes(channel(id)), .text(id)],
                    account: reservations == nil ? quotas.account(id, footprint: 0, ttl: ttl) : nil)
            ], writes: true)[0]
        let parts = reply.array ?? []
        if let reservations, parts.first?.integer == 1 || parts.first?.integer == -1 { reservations.released(id, score: score, run: runner) }
        switch parts.first?.integer {
        case 1: return .deleted
        case 0: return .mismatch(current: parts.count > 1 ? parts[1].integer.map(UInt64.init) ?? 0 : 0)
        case Self.claimTakenOver: throw Self.claimTakenOverError()
        default: return .absent
        }
    }

    // MARK: - Live subscribers

    /// Steps a followed session's log keeps (about: Redis trims whole blocks).
    private var logLength: Int { 256 }

    func follow(_ ids: [String]) {
        guard !ids.isEmpty else { return }
        // Twice the hub's refresh period, so that one late refresh loses nothing.
        _ = try? run(ids.map { ["SET", .bytes(layout.followKey($0)), "1", "PX", "30000"] })
    }

    func existing(_ ids: [String]) -> Set<String>? {
        guard !ids.isEmpty else { return [] }
        guard let replies = try? run(ids.map { ["EXISTS", .bytes(layout.key($0))] }) else { return nil }
        return Set(zip(ids, replies).filter { $0.1.integer == 1 }.map(\.0))
    }

    func announce(_ id: String) {
        _ = try? run([[redis.isCluster ? "SPUBLISH" : "PUBLISH", .bytes(channel(id)), .text(id)]])
    }

    func steps(of id: String, after cursor: String?) throws(SessionError) -> [LoggedStep] {
        Self.steps(try run([stepsCommand(id, after: cursor)])[0], newestFirst: cursor == nil)
    }

    func steps(of logs: [(id: String, cursor: String?)]) -> [[LoggedStep]?] {
        // The logs read from a cursor go by slot, one XREAD of all of a slot's logs (a
        // cluster's multi-key command must stay in one slot); the others one by one. All in
        // one pipeline, which a cluster splits into one a master.
        guard !logs.isEmpty else { return [] }
        var bySlot: [Int: [Int]] = [:]
        var alone: [Int] = []
        for (index, log) in logs.enumerated() {
            if log.cursor != nil { bySlot[redis.slot(of: layout.logKey(log.id)), default: []].append(index) } else { alone.append(index) }
        }
        let groups = Array(bySlot.values)
        var commands: [[RedisArgument]] = groups.map { group in
            ["XREAD", "COUNT", "1000", "STREAMS"] + group.map { .bytes(layout.logKey(logs[$0].id)) } + group.map { .text(logs[$0].cursor!) }
        }
        commands += alone.map { stepsCommand(logs[$0].id, after: nil) }
        guard let replies = try? redis.run(commands) else { return logs.map { _ in nil } }
        var steps = [[LoggedStep]?](repeating: nil, count: logs.count)
        for (group, reply) in zip(groups, replies) {
            if case .error = reply { continue }
            // [[key, entries], ...] for the logs with entries after their cursors; null where none has.
            var read: [[UInt8]: RedisValue] = [:]
            for stream in reply.array ?? [] {
                if let pair = stream.array, pair.count == 2, let key = pair[0].bytes { read[key] = pair[1] }
            }
            for index in group { steps[index] = read[layout.logKey(logs[index].id)].map { Self.steps($0, newestFirst: false) } ?? [] }
        }
        for (index, reply) in zip(alone, replies.dropFirst(groups.count)) {
            if case .error = reply { continue }
            steps[index] = Self.steps(reply, newestFirst: true)
        }
        return steps
    }

    private func stepsCommand(_ id: String, after cursor: String?) -> [RedisArgument] {
        let key = RedisArgument.bytes(layout.logKey(id))
        return cursor.map { ["XRANGE", key, .text("(" + $0), "+", "COUNT", "1000"] } ?? [
            "XREVRANGE", key, "+", "-", "COUNT", .text(String(logLength)),
        ]
    }

    /// A reply's entries as steps, oldest first (`XREVRANGE` answers newest first).
    private static func steps(_ reply: RedisValue, newestFirst: Bool) -> [LoggedStep] {
        let steps = (reply.array ?? []).compactMap(Self.step)
        return newestFirst ? steps.reversed() : steps
    }

    /// A stream entry, `[id, [field, value, ...]]`, as a step (`RedisScripts.common` says what
    /// it holds).
    private static func step(_ entry: RedisValue) -> LoggedStep? {
        guard let parts = entry.array, parts.count == 2, let cursor = parts[0].bytes, let values = parts[1].array else { return nil }
        var fields: [String: [UInt8]] = [:]
        var written: [String: [UInt8]] = [:]
        var dropped: [String: [UInt8]] = [:]
        for index in stride(from: 0, to: values.count - 1, by: 2) {
            guard let name = values[index].bytes, let value = values[index + 1].bytes, let first = name.first else { continue }
            let rest = String(decoding: name.dropFirst(), as: UTF8.self)
            switch first {
            case UInt8(ascii: "p"): written[rest] = value
            case UInt8(ascii: "x"): dropped[rest] = value
            default: fields[String(decoding: name, as: UTF8.self)] = value
            }
        }
        func text(_ name: String) -> String? { fields[name].map { String(decoding: $0, as: UTF8.self) } }
        guard let kind = text("k").flatMap(StoredStep.init(rawValue:)), let incarnation = text("g"), let version = text("v").flatMap(UInt64.init)
        else { return nil }
        let content: LoggedContent
        if kind == .deleted {
            content = .none
        } else if let manifest = fields["m"].flatMap(RedisSessionLayout.parts), let previous = fields["q"].flatMap(RedisSessionLayout.parts) {
            content = .parts(LoggedParts(manifest: manifest, previousManifest: previous, written: written, dropped: dropped))
        } else if let data = fields["d"], !data.isEmpty {
            content = .whole(data)
        } else {
            content = .read
        }
        return LoggedStep(
            cursor: String(decoding: cursor, as: UTF8.self), step: kind, incarnation: incarnation, version: version,
            baseVersion: text("b").flatMap(UInt64.init), options: fields["o"] ?? [], content: content)
    }

    /// The channel commits to `id` are announced on.
    private func channel(_ id: String) -> [UInt8] { redis.announcementChannel(layout.channel, for: layout.key(id)) }

    func listen(onStep: @escaping @Sendable (String) -> Void, onListening: @escaping @Sendable (_ kept: Bool) -> Void) {
        let redis = redis
        // A cluster hears on one thread a master, and is told it listens again on whichever
        // thread confirmed last: the handlers are run one at a time, as they are on one Redis.
        // A catch-up reads a session's cursor, its log and the session, then tells its feed;
        // two at once for one session (a resync beside a step heard) reset its subscribers to
        // a version the other was about to send them as a delta.
        let turn = Turn()
        let subscription = redis.listen(
            layout.channel, onMessage: { id in turn.take { onStep(String(decoding: id, as: UTF8.self)) } },
            onSubscribed: { kept in
                // A subscription (re)made after a loss finds the pool's idle connections to the
                // same Redis likely broken too. The pool drops those Redis closed, but not those
                // a partition left half open, which fail at their first write: the catch-up that
                // follows would fail on them, once each, and leave feeds behind for want of a read.
                if !kept { redis.closeIdle() }
                turn.take { onListening(kept) }
            })
        listening.withLock { $0 = subscription }
    }

    /// One caller at a time.
    private final class Turn: Sendable {
        private let mutex = Mutex(())
        func take(_ body: () -> Void) { mutex.withLock { _ in body() } }
    }

    func stopListening() {
        listening.withLock { $0.take() }?.stop()
    }

    /// A script call. EVAL with the text: Redis keeps each script compiled by its hash, so
    /// this costs it no more than EVALSHA would, and a restarted Redis needs nothing loaded.
    /// A write made under an `Idempotency-Key` (`IdempotencyHold.current`) runs inside
    /// `RedisScripts.held`, which checks the key's claim and marks it committed in the same step;
    /// one of a tenant's sessions (`account`) runs inside `RedisTenantQuotas`' wrapper, which
    /// counts it against the tenant's quotas in the same step.
    private func script(
        _ script: RedisScript, keys: [[UInt8]], arguments: [RedisArgument], account: (keys: [[UInt8]], arguments: [RedisArgument])?
    ) -> [RedisArgument] {
        var (keys, arguments) = (keys, arguments)
        if let account {
            keys += account.keys
            arguments += account.arguments
        }
        let hold = IdempotencyHold.current
        if let hold {
            keys.append(hold.key)
            arguments += [.bytes(hold.claim), .bytes(hold.committed), .text(String(hold.retentionMilliseconds))]
        }
        let text = script.text(held: hold != nil, counted: account != nil, sharded: redis.isCluster)
        return ["EVAL", .text(text), .text(String(keys.count))] + keys.map(RedisArgument.bytes) + arguments
    }

    /// What a held script answers where its key's claim has been taken over.
    private static let claimTakenOver = -2

    private static func claimTakenOverError() -> SessionError {
        .refused(
            APIError(
                .idempotencyKeyInUse,
                message:
                    "this request ran past its Idempotency-Key's claim (a minute) and a retry has taken the key over; this one wrote nothing"))
    }

    /// Runs a pipeline, on `lease` where given (its replies to commands sent earlier are read
    /// and checked too, and left out of what is returned). Redis's failures, and error replies
    /// that say it cannot serve now (full, loading, read-only, busy), are `storeUnavailable`
    /// (503, try again); any other error reply means a command this code sent was wrong, and is
    /// an `internalFailure` (500, logged). A pipeline that `writes` (commits a session) and was
    /// sent whole but not answered may still take effect: `outcomeUnknown`.
    private func run(_ commands: [[RedisArgument]], on lease: RedisLease? = nil, writes: Bool = false) throws(SessionError) -> [RedisValue] {
        let started = ContinuousClock.now
        defer { events(.storeCommand(ContinuousClock.now - started)) }
        let replies: ArraySlice<RedisValue>
        do throws(RedisError) {
            // On a lease, the replies to what it sent earlier come first, and are checked too.
            if let lease { replies = try lease.run(commands)[...] } else { replies = try redis.run(commands)[...] }
        } catch {
            if writes, case .unanswered = error {
                events(.storeError)
                throw .outcomeUnknown(error.description)
            }
            throw failure(error)
        }
        if failing.exchange(false, ordering: .relaxed) {
            logger.notice("session store reachable again", metadata: ["redis": "\(redis.description)"])
        }
        if let message = replies.lazy.compactMap(Self.errorMessage).first { throw failure(.reply(message)) }
        return Array(replies.suffix(commands.count))
    }

    private static func errorMessage(_ value: RedisValue) -> String? {
        if case .error(let message) = value { message } else { nil }
    }

    /// What a failure means for the request: an error reply by its code; Redis unreachable or
    /// too slow is `storeUnavailable`, logged once until it is back.
    private func failure(_ error: RedisError) -> SessionError {
        events(.storeError)
        if case .reply(let message) = error {
            let code = String(message.prefix { $0 != " " })
            return Self.unavailableReplies.contains(code) ? .storeUnavailable(error.description) : .internalFailure(error.description)
        }
        if !failing.exchange(true, ordering: .relaxed) {
            logger.warning("session store unavailable", metadata: ["error": "\(error)", "redis": "\(redis.description)"])
        }
        return .storeUnavailable(error.description)
    }

    /// Error replies by which Redis says it cannot serve for now (a cluster's redirections
    /// among them: those still standing after the redirections and the timeout allowed are a
    /// cluster whose slots do not settle).
    private static let unavailableReplies: Set<String> = [
        "OOM", "LOADING", "BUSY", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "MISCONF", "MOVED", "ASK",
    ]
}
