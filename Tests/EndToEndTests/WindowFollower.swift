import ByteJSON
import Foundation
import LiveCollections
import TestSupport

/// A client of a window of a session, as an app's list would be: it keeps the rows it was sent
/// and applies each event by its format, checking versions follow one another. Every state it
/// reaches is recorded, to be compared with the session's rows at that version.
// @unchecked Sendable: a test hands each follower to one thread at a time.
final class WindowFollower: @unchecked Sendable {
    /// The rows and window a client held after one event.
    struct Seen {
        var event: String
        var incarnation: String
        var version: Int
        var rows: [JSONValue]
        var window: JSONValue
        /// The window's query then.
        var query: String
    }

    let format: String
    let session: String
    private(set) var query: String
    private(set) var client: EventStreamClient
    private(set) var rows: [JSONValue] = []
    /// The data of the last event read.
    private(set) var lastData = ""
    private(set) var version: Int?
    private(set) var incarnation: String?
    private(set) var window: JSONValue?
    private(set) var seen: [Seen] = []
    private(set) var problems: [String] = []
    private let port: UInt16

    init(port: UInt16, session: String, format: String, query: String) throws {
        self.port = port
        self.session = session
        self.format = format
        self.query = query
        client = try EventStreamClient(port: port, path: "/sessions/\(session)/events?format=\(format)&\(query)", timeoutSeconds: 10)
    }

    /// Opens the stream again with another window (a scroll), resuming from the last id.
    func move(to query: String) throws {
        self.query = query
        let last = client.lastEventID
        client = try EventStreamClient(
            port: port, path: "/sessions/\(session)/events?format=\(format)&\(query)", headers: last.map { [("Last-Event-ID", $0)] } ?? [],
            timeoutSeconds: 10)
    }

    /// Reads events until the client holds `version` of life `incarnation`; false where the
    /// stream ends first.
    func follow(until version: Int, of incarnation: String) throws -> Bool {
        while self.version != version || self.incarnation != incarnation {
            guard let event = try client.next() else { return false }
            apply(event)
        }
        return true
    }

    /// Reads the next event; nil where the stream ended.
    func next() throws -> String? {
        guard let event = try client.next() else { return nil }
        apply(event)
        return event.event
    }

    private func apply(_ event: ServerSentEvent) {
        lastData = event.data
        guard let data = try? JSONValue(parsing: event.data) else {
            problems.append("unreadable data: \(event.data.prefix(200))")
            return
        }
        let life = event.id.map { String($0.prefix { $0 != "." }) }
        switch event.event {
        case "reset":
            rows = data["items"]?.array ?? []
        case "delta", "window":
            guard let base = data["baseVersion"]?.int else {
                problems.append("\(event.event) without a base version")
                return
            }
            if base != version || life != incarnation {
                problems.append("\(event.event) from \(base) on \(version.map(String.init) ?? "nothing")")
            }
            if event.event == "delta" {
                do {
                    rows = try replay(data)
                } catch {
                    problems.append("version \(data["version"]?.int ?? -1) does not replay: \(error) \(event.data.prefix(400))")
                }
            }
        default: return
        }
        version = data["version"]?.int
        incarnation = life
        window = data["window"]
        seen.append(Seen(event: event.event, incarnation: life ?? "", version: version ?? -1, rows: rows, window: window ?? .null, query: query))
    }

    private func replay(_ data: JSONValue) throws -> [JSONValue] {
        switch format.prefix(while: { $0 != "&" }) {
        case "batch":
            let delta = try indexDelta(data["delta"])
            let new = try newRows(data, positions: delta.insertions + delta.reloads.map(\.target))
            let replayed = try delta.replay(old: rows, new: new)
            guard data["items"] == nil || replayed.map(\.identity) == new.map(\.identity) else {
                throw WireError.shape("identities differ after the batch")
            }
            return data["items"] == nil ? replayed : new
        case "sequential":
            let steps = data["sequential"]?.array ?? []
            let positions = steps.flatMap { step -> [Int] in
                guard ["insert", "change"].contains(step["op"]?.stringValue), let position = step["position"]?.int else { return [] }
                return Array(position..<position + (step["count"]?.int ?? 1))
            }
            let new = try newRows(data, positions: positions)
            let operations: [AndroidReplayer.Operation] = try (data["sequential"]?.array ?? []).map { step in
                let position = step["position"]?.int ?? -1
                let count = step["count"]?.int ?? 1
                switch step["op"]?.stringValue {
                case "remove": return .remove(position: position, count: count)
                case "insert": return .insert(position: position, count: count)
                case "change": return .change(position: position, count: count)
                case "move": return .move(from: step["from"]?.int ?? -1, to: step["to"]?.int ?? -1)
                default: throw WireError.shape("unknown step \(step)")
                }
            }
            let (list, _) = try AndroidReplayer.apply(operations, to: rows, new: new)
            guard data["items"] == nil || list.map(\.identity) == new.map(\.identity) else {
                throw WireError.shape("identities differ after the steps")
            }
            return data["items"] == nil ? list : new
        case "keyed": return try applyKeyed(data["keyed"]?.array ?? [], to: rows)
        case "jsonPatch": return try applyPatch(data["jsonPatch"]?.array ?? [], to: rows)
        default: throw WireError.shape("no replayer for \(format)")
        }
    }
}

/// The new rows a batch or sequential event's delta needs: its `items`, or, asked with
/// `rows=changed`, its `rows` put at the positions that take them in the order the delta meets
/// them (`positions`: insertions, then reload targets; or the insert and change steps' rows),
/// the other positions left null for the rows the client holds.
func newRows(_ data: JSONValue, positions: [Int]) throws -> [JSONValue] {
    if let items = data["items"]?.array { return items }
    guard let carried = data["rows"]?.array, let newCount = data["newCount"]?.int else { throw WireError.shape("a delta without rows or items") }
    guard carried.count == positions.count else { throw WireError.shape("\(carried.count) rows for \(positions.count) positions") }
    var new = [JSONValue](repeating: .null, count: newCount)
    for (row, position) in zip(carried, positions) {
        guard new.indices.contains(position) else { throw WireError.shape("row position \(position) of \(newCount)") }
        new[position] = row
    }
    return new
}
