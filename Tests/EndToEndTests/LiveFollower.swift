import ByteJSON
import Foundation
import LiveCollections
import TestSupport

/// A subscriber as a client would write one: it keeps the list it was sent and applies each
/// event to it by the event's format, checking that versions follow one another.
// @unchecked Sendable: a test hands each follower to one thread at a time, and reads it again
// only after that thread is done.
final class LiveFollower: @unchecked Sendable {  // one thread at a time; see above
    let format: String
    private(set) var client: EventStreamClient
    private(set) var items: [JSONValue] = []
    private(set) var version: Int?
    /// Everything wrong the follower saw (a gap, a repeat, a delta that does not replay).
    private(set) var problems: [String] = []
    private(set) var resets = 0
    /// Each reset as "from→to" versions, for a failure's message.
    private(set) var resetVersions: [String] = []
    private(set) var deltas = 0
    private(set) var ended: String?
    private let port: UInt16
    private let path: String

    init(port: UInt16, session: String, format: String, query: String = "", lastEventID: String? = nil) throws {
        self.port = port
        self.format = format
        path = "/sessions/\(session)/events?format=\(format)\(query)"
        client = try EventStreamClient(port: port, path: path, headers: lastEventID.map { [("Last-Event-ID", $0)] } ?? [])
    }

    /// Takes over what another follower had (its list, version and counts), as a client that
    /// reconnects elsewhere keeps its list.
    func adopt(_ other: LiveFollower) {
        items = other.items
        version = other.version
        resets += other.resets
        resetVersions += other.resetVersions
        deltas += other.deltas
        problems += other.problems
    }

    /// Drops the connection and opens a new one with the last id seen, as a browser does.
    func reconnect() throws {
        let last = client.lastEventID
        client = try EventStreamClient(port: port, path: path, headers: last.map { [("Last-Event-ID", $0)] } ?? [])
    }

    /// Reads events until the list is at `target` (true), or the stream ends (false).
    func follow(until target: Int) throws -> Bool {
        while version != target {
            guard let event = try client.next() else { return false }
            apply(event)
            if ended != nil { return false }
        }
        return true
    }

    func apply(_ event: ServerSentEvent) {
        guard let data = try? JSONValue(parsing: event.data) else {
            problems.append("unreadable data: \(event.data.prefix(200))")
            return
        }
        switch event.event {
        case "reset":
            resets += 1
            resetVersions.append("\(version ?? -1)→\(data["version"]?.int ?? -1)")
            items = data["items"]?.array ?? []
            version = data["version"]?.int
        case "delta":
            deltas += 1
            guard let base = data["baseVersion"]?.int, let next = data["version"]?.int else {
                problems.append("a delta without versions")
                return
            }
            if base != version { problems.append("delta from \(base) on \(version.map(String.init) ?? "nothing")") }
            do {
                items = try replay(data)
            } catch {
                problems.append("version \(next) does not replay: \(error)")
            }
            version = next
        case "end": ended = data["reason"]?.stringValue
        default: break
        }
    }

    private func replay(_ data: JSONValue) throws -> [JSONValue] {
        switch format {
        case "batch", "batch&rows=changed":
            let delta = try indexDelta(data["delta"])
            let new = try newRows(data, positions: delta.insertions + delta.reloads.map(\.target))
            let replayed = try delta.replay(old: items, new: new)
            // Where the event carried only the changed rows, the replay is the list.
            guard data["items"] != nil else { return replayed }
            guard replayed.map(\.identity) == new.map(\.identity) else { throw WireError.shape("identities differ after the batch") }
            return new
        case "keyed": return try applyKeyed(data["keyed"]?.array ?? [], to: items)
        case "jsonPatch": return try applyPatch(data["jsonPatch"]?.array ?? [], to: items)
        default: throw WireError.shape("no replayer for \(format)")
        }
    }
}

extension JSONValue {
    /// An item's `id`.
    var identity: JSONValue { self["id"] ?? .null }
}

/// Keyed operations (`remove`, `move`/`insert` before an id or at the end, `update`) applied by id.
func applyKeyed(_ operations: [JSONValue], to old: [JSONValue]) throws -> [JSONValue] {
    var list = old
    func index(of id: JSONValue?) throws -> Int {
        guard let id, let index = list.firstIndex(where: { $0.identity == id }) else { throw WireError.shape("no item \(String(describing: id))") }
        return index
    }
    func place(_ item: JSONValue, before: JSONValue?) throws {
        if let before, before != .null { list.insert(item, at: try index(of: before)) } else { list.append(item) }
    }
    for operation in operations {
        switch operation["op"]?.stringValue {
        case "remove": list.remove(at: try index(of: operation["id"]))
        case "move":
            let item = list.remove(at: try index(of: operation["id"]))
            try place(item, before: operation["before"])
        case "insert": try place(operation["item"] ?? .null, before: operation["before"])
        case "update": list[try index(of: operation["id"])] = operation["item"] ?? .null
        default: throw WireError.shape("unknown keyed operation \(operation)")
        }
    }
    return list
}

/// An RFC 6902 patch of the operations a flat session's patches use (`/index` and
/// `/index/field` paths), applied in order.
func applyPatch(_ operations: [JSONValue], to old: [JSONValue]) throws -> [JSONValue] {
    var list = old
    func index(_ path: String?, appending: Bool = false) throws -> (Int, String?) {
        let tokens = (path ?? "").split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard let first = tokens.first else { throw WireError.shape("bad path \(path ?? "")") }
        let position = first == "-" ? list.count : Int(first) ?? -1
        guard position >= 0, position < list.count + (appending ? 1 : 0) else { throw WireError.shape("path \(path ?? "") out of range") }
        return (position, tokens.count > 1 ? String(tokens.dropFirst().joined(separator: "/")) : nil)
    }
    for operation in operations {
        let op = operation["op"]?.stringValue
        switch op {
        case "add", "replace":
            let (position, field) = try index(operation["path"]?.stringValue, appending: op == "add")
            let value = operation["value"] ?? .null
            if let field {
                guard case .object(var members) = list[position] else { throw WireError.shape("not an object") }
                members[Array(field.utf8)] = value
                list[position] = .object(members)
            } else if op == "add" {
                list.insert(value, at: position)
            } else {
                list[position] = value
            }
        case "remove":
            let (position, field) = try index(operation["path"]?.stringValue)
            if let field {
                guard case .object(var members) = list[position] else { throw WireError.shape("not an object") }
                members[Array(field.utf8)] = nil
                list[position] = .object(members)
            } else {
                list.remove(at: position)
            }
        case "move":
            let (from, _) = try index(operation["from"]?.stringValue)
            let item = list.remove(at: from)
            let (to, _) = try index(operation["path"]?.stringValue, appending: true)
            list.insert(item, at: to)
        case "test": continue
        default: throw WireError.shape("unknown patch operation \(operation)")
        }
    }
    return list
}
