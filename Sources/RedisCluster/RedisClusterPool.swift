import RedisClient
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A Redis Cluster as one pool: each command goes to the master of its key's slot, a pipeline
/// split into one pipeline a master (its replies put back in order), over a `RedisPool` a
/// node. A command whose slot moved (`MOVED`) goes again to the new master, and the map is
/// read again; one whose slot is moving (`ASK`) goes to the importing node after `ASKING`,
/// the map unchanged; one the cluster cannot serve yet (`TRYAGAIN`, `CLUSTERDOWN`), or whose
/// master cannot be connected to (a failover under way), is tried again with back-off, until
/// the command timeout has passed. Nothing is sent twice: only replies that say a command did
/// not run, and connections never made, are tried again.
package final class RedisClusterPool: Sendable {
    package let configuration: RedisClusterConfiguration
    private let map = Mutex(Map())
    private let pools = Mutex<[ClusterNode: RedisPool]>([:])

    private struct Map: Sendable {
        var slots = ClusterSlots()
        var read: ContinuousClock.Instant?
        /// Full reads of the map so far (`MOVED`s and lost masters make them).
        var reads = 0
    }

    /// Where one command of a pipeline goes: the master of its slot (nil), or a node a
    /// redirection named.
    private struct Route {
        let index: Int
        var node: ClusterNode?
        var asking = false
    }

    package init(_ configuration: RedisClusterConfiguration) {
        self.configuration = configuration
    }

    /// The masters as the map has them now.
    package var masters: [ClusterNode] { map.withLock { $0.slots.masters } }

    /// The pools made so far, one a node.
    var nodePools: [RedisPool] { pools.withLock { Array($0.values) } }

    /// How many times the map has been read whole.
    package var mapReads: Int { map.withLock { $0.reads } }

    /// The master the map names for `slot`.
    package func master(of slot: Int) -> ClusterNode? { map.withLock { $0.slots.master(of: slot) } }

    /// The pool of connections to `node`, made when first needed.
    package func pool(_ node: ClusterNode) -> RedisPool {
        pools.withLock { pools in
            if let pool = pools[node] { return pool }
            let pool = RedisPool(configuration.configuration(node))
            pools[node] = pool
            return pool
        }
    }

    /// Runs the commands (each on the master of its key's slot) and returns their replies in
    /// order. A command that is still redirected when its redirections or the timeout run out
    /// is answered with the last redirection (an error reply).
    package func run(_ commands: [[RedisArgument]]) throws(RedisError) -> [RedisValue] {
        let deadline = ContinuousClock.now + configuration.node.commandTimeout
        if map.withLock({ $0.read == nil }) { try refresh(force: true) }
        var replies = [RedisValue?](repeating: nil, count: commands.count)
        var routes = commands.indices.map { Route(index: $0) }
        var rounds = 0
        var pause = Duration.milliseconds(5)
        while !routes.isEmpty {
            let (again, stale, wait) = try send(commands, routes, into: &replies, deadline: deadline)
            rounds += 1
            guard !again.isEmpty else { break }
            guard rounds <= configuration.maxRedirections, ContinuousClock.now + (wait ? pause : .zero) < deadline else {
                // Out of tries: their last replies (a redirection, or the cluster down) stand.
                guard again.allSatisfy({ replies[$0.index] != nil }) else { throw .connect("no master of their slots could be reached") }
                break
            }
            if wait {
                Self.sleep(pause)
                pause = min(pause * 2, .milliseconds(200))
            }
            if stale { try? refresh(force: false) }
            routes = again
        }
        return replies.map { $0 ?? .null }
    }

    /// One round: each master its pipeline. Returns the commands to send again, whether the
    /// map is stale, and whether to wait first.
    private func send(
        _ commands: [[RedisArgument]], _ routes: [Route], into replies: inout [RedisValue?], deadline: ContinuousClock.Instant
    ) throws(RedisError) -> (again: [Route], stale: Bool, wait: Bool) {
        var byNode: [ClusterNode: [Route]] = [:]
        let (slots, fallback) = map.withLock { ($0.slots, $0.slots.masters.first) }
        for route in routes {
            let node = route.node ?? Self.key(of: commands[route.index]).flatMap { slots.master(of: HashSlot.of($0)) } ?? fallback
            guard let node else { throw .connect("the cluster's map names no master") }
            byNode[node, default: []].append(route)
        }
        var again: [Route] = []
        var stale = false
        var wait = false
        for (node, group) in byNode {
            var pipeline: [[RedisArgument]] = []
            for route in group {
                if route.asking { pipeline.append(["ASKING"]) }
                pipeline.append(commands[route.index])
            }
            let answered: [RedisValue]
            do {
                answered = try pool(node).run(pipeline)
            } catch {
                // Never connected, so nothing ran: its master may be failing over.
                guard case .connect = error, ContinuousClock.now < deadline else { throw error }
                again += group.map { Route(index: $0.index) }
                stale = true
                wait = true
                continue
            }
            var at = 0
            for route in group {
                if route.asking { at += 1 }
                let reply = answered[at]
                at += 1
                replies[route.index] = reply
                guard case .error(let message) = reply else { continue }
                let words = message.split(separator: " ")
                switch words.first {
                case "MOVED" where words.count == 3:
                    guard let slot = Int(words[1]), (0..<HashSlot.count).contains(slot), let to = ClusterNode(words[2]) else { continue }
                    map.withLock { $0.slots.move(slot, to: to) }
                    again.append(Route(index: route.index, node: to))
                    stale = true
                case "ASK" where words.count == 3:
                    guard let to = ClusterNode(words[2]) else { continue }
                    again.append(Route(index: route.index, node: to, asking: true))
                case "TRYAGAIN", "CLUSTERDOWN":
                    again.append(Route(index: route.index))
                    wait = true
                default:
                    continue
                }
            }
        }
        return (again, stale, wait)
    }

    /// Reads the slot map again from the first node that answers (the masters known, then the
    /// seeds); at most every 100 ms unless `force`d, as a burst of `MOVED`s needs one read.
    package func refresh(force: Bool = true) throws(RedisError) {
        let (known, last) = map.withLock { ($0.slots.masters, $0.read) }
        if !force, let last, ContinuousClock.now - last < .milliseconds(100) { return }
        var failure = RedisError.connect("no node of the cluster was given")
        for node in known + configuration.seeds.filter({ !known.contains($0) }) {
            do throws(RedisError) {
                let reply = try pool(node).run([["CLUSTER", "SLOTS"]])[0]
                if case .error(let message) = reply { throw .reply(message) }
                guard let slots = ClusterSlots(reply: reply, asked: node) else { throw .io("CLUSTER SLOTS answered something else") }
                map.withLock { map in
                    map.slots = slots
                    map.read = .now
                    map.reads += 1
                }
                return
            } catch {
                failure = error
            }
        }
        throw failure
    }

    /// The key a command's slot is taken from; nil for a command without one (sent to any
    /// master).
    package static func key(of command: [RedisArgument]) -> [UInt8]? {
        guard command.count >= 2 else { return nil }
        switch String(decoding: bytes(command[0]), as: UTF8.self).uppercased() {
        case "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO":
            guard command.count >= 4, let keys = Int(String(decoding: bytes(command[2]), as: UTF8.self)), keys > 0 else { return nil }
            return bytes(command[3])
        case "XREAD", "XREADGROUP":
            guard let streams = command.firstIndex(where: { String(decoding: bytes($0), as: UTF8.self).uppercased() == "STREAMS" }),
                streams + 1 < command.count
            else { return nil }
            return bytes(command[streams + 1])
        case "PING", "ECHO", "CLUSTER", "INFO", "SCRIPT", "FUNCTION", "PUBLISH", "ASKING", "READONLY", "TIME", "DBSIZE", "FLUSHALL",
            "FLUSHDB", "WAIT", "CONFIG", "CLIENT", "MULTI", "EXEC":
            return nil
        default:
            return bytes(command[1])
        }
    }

    private static func bytes(_ argument: RedisArgument) -> [UInt8] {
        switch argument {
        case .bytes(let bytes): bytes
        case .borrowed(let pieces): pieces.flatMap { Array($0) }
        }
    }

    static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        nanosleep(&pause, nil)
    }
}

extension RedisClusterPool {
    /// Each master and the slots it serves, by the map read now; nil where the cluster cannot
    /// be asked or leaves a slot without a master.
    func slotsByMaster() -> [ClusterNode: [Int]]? {
        guard (try? refresh(force: true)) != nil else { return nil }
        let slots = map.withLock { $0.slots }
        guard slots.isComplete else { return nil }
        var plan: [ClusterNode: [Int]] = [:]
        for slot in 0..<HashSlot.count { plan[slots.master(of: slot)!, default: []].append(slot) }
        return plan
    }
}
