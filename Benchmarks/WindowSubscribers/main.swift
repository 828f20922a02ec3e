// The subscriber side of `make bench-windows`: holds many windows of one session (each its own
// event stream, 50 rows), runs one kind of commit a number of times, and times each from the
// moment it is sent to the moment the first and the last subscriber it concerns have read it.
//
// Usage: WindowSubscribers PORT SESSION SUBSCRIBERS KIND SPACING MODE ROUNDS VERSION
//    or: WindowSubscribers floor COUNT BYTES ROUNDS (no server: see Floor.swift)
//   KIND: `after` (subscriber k follows the 50 rows after item k*SPACING) or `offset` (from row
//   k*SPACING). The session's items are {"id": position, ...} when it starts.
//   MODE: `outside` (update one item outside every window), `inside` (update 100 items, each in
//   another subscriber's window), `top` (insert an item at the top).
//   VERSION: the session's version before the first round.
// Prints `ready N` once every subscriber has its reset, waits for a line on standard input, runs
// ROUNDS commits, prints `committed` (and, outside, `tail` and `quiet` around a second and a half
// with no commit), then one JSON object: {"subscribed", "first": [s], "last": [s], "answer": [s],
// "deltas", "windows", "tailWindows", "bytes"} (deltas and window events read, those of the
// quiet tail apart; bytes read after the resets).
import BenchStreams
import Glibc

let arguments = CommandLine.arguments
if arguments.count == 5, arguments[1] == "floor", let count = Int(arguments[2]), let bytes = Int(arguments[3]), let rounds = Int(arguments[4]) {
    runFloor(count: count, bytes: bytes, rounds: rounds)
    exit(0)
}
guard arguments.count == 9, let port = UInt16(arguments[1]), let count = Int(arguments[3]), let spacing = Int(arguments[5]),
    let rounds = Int(arguments[7]), let startVersion = Int(arguments[8])
else {
    print("usage: WindowSubscribers PORT SESSION SUBSCRIBERS after|offset SPACING outside|inside|top ROUNDS VERSION")
    exit(2)
}
let session = arguments[2]
let kind = arguments[4]
let mode = arguments[6]

let subscribers = Subscribers()
var byIndex: [Int32] = []
var started = 0
for batchStart in stride(from: 0, to: count, by: 250) {
    var batch = Set<Int32>()
    for index in batchStart..<min(count, batchStart + 250) {
        let descriptor = connectLocal(port)
        sendAll(descriptor, "GET /sessions/\(session)/events?format=keyed&limit=50&\(kind)=\(index * spacing) HTTP/1.1\r\nHost: x\r\n\r\n")
        subscribers.add(descriptor)
        batch.insert(descriptor)
        byIndex.append(descriptor)
    }
    let (_, _, reset) = subscribers.await("event: reset", among: batch, deadline: now() + 30)
    started += reset
}
let atStart = subscribers.received
// Held and started from their reset; a subscriber refused (or never answered) is left out.
say("ready \(started)")
if started < count { say("\(count - started) of \(count) subscribers got no reset", to: 2) }
_ = readLine()

/// Counts each of `markers` in what `subscribers` reads from now until `seconds` pass.
func occurrences(of markers: [String], in subscribers: Subscribers, for seconds: Double) -> [Int] {
    var counts = [Int](repeating: 0, count: markers.count)
    let needles = markers.map { Array($0.utf8) }
    _ = subscribers.watch(deadline: now() + seconds) { text, newFrom in
        for (index, needle) in needles.enumerated() {
            var start = 0
            while let found = firstIndex(of: needle, in: UnsafeBufferPointer(rebasing: text[start...])) {
                // A marker that starts in the kept tail was counted when it was read.
                if start + found >= newFrom { counts[index] += 1 }
                start += found + needle.count
            }
        }
        return false
    }
    return counts
}

/// The marker of a delta (a static, made when first read: the floor runs before this file's
/// top-level code reaches its globals).
enum Marker { static let delta = Array("event: delta".utf8) }

func list(_ values: [Double]) -> String { "[" + values.map { "\($0)" }.joined(separator: ",") + "]" }

/// Whether the text shows the event that brings a window to a version (`versionMark`, its
/// `.<version>~`) as a delta.
func showsDelta(_ text: UnsafeBufferPointer<UInt8>, versionMark: [UInt8]) -> Bool {
    guard let at = firstIndex(of: versionMark, in: text) else { return false }
    return firstIndex(of: Marker.delta, in: UnsafeBufferPointer(rebasing: text[at...].prefix(64))) != nil
}

let writer = connectLocal(port)
var firsts: [Double] = []
var lasts: [Double] = []
var answers: [Double] = []
var topID = 0
for round in 1...rounds {
    let version = startVersion + round
    let body: String
    var concerned: Set<Int32>?
    switch mode {
    case "outside":
        // Rows 51 to 99 after each anchor are in no window.
        let id = (round * 7 % count) * spacing + 75
        body = "{\"operations\":[{\"op\":\"update\",\"id\":\(id),\"item\":{\"id\":\(id),\"title\":\"row \(id)\",\"v\":\(round)}}]}"
    case "inside":
        let chosen = (0..<100).map { (round * 100 + $0 * (count / 100)) % count }
        // Subscribers the server refused (and closed) are not waited for.
        concerned = Set(chosen.map { byIndex[$0] }).intersection(subscribers.open)
        let operations = chosen.map { index in
            let id = index * spacing + 1 + round % 50
            return "{\"op\":\"update\",\"id\":\(id),\"item\":{\"id\":\(id),\"title\":\"row \(id)\",\"v\":\(round)}}"
        }
        body = "{\"operations\":[\(operations.joined(separator: ","))]}"
    default:
        let id = -round
        body = "{\"operations\":[{\"op\":\"insert\",\"id\":\(id),\"item\":{\"id\":\(id),\"title\":\"top\",\"v\":0},\"before\":\(topID)}]}"
        topID = id
    }
    let started = now()
    _ = request(writer, "POST", "/sessions/\(session)/changes", body)
    answers.append(now() - started)
    if mode == "outside" { continue }
    let versionMark = Array(".\(version)~".utf8)
    let (first, last, reached) = subscribers.watch(among: concerned, deadline: now() + 20) { text, _ in
        showsDelta(text, versionMark: versionMark)
    }
    if reached < (concerned?.count ?? subscribers.open.count) {
        say("\((concerned?.count ?? subscribers.open.count) - reached) subscribers did not get version \(version) within 20 s", to: 2)
    }
    if let first, let last {
        firsts.append(first - started)
        lasts.append(last - started)
    }
}
say("committed")
// What else arrived: rows (deltas) and totals (window events). Outside: first what the commits
// brought (sent while they ran, waiting unread), then a second and a half with no commit, in
// which each window is sent the total still pending, so the runner can price a total alone.
let counts = occurrences(of: ["event: delta", "event: window"], in: subscribers, for: mode == "outside" ? 0.3 : 0.1)
var tail = [0, 0]
if mode == "outside" {
    say("tail")
    tail = occurrences(of: ["event: delta", "event: window"], in: subscribers, for: 1.5)
    say("quiet")
}
let bytes = subscribers.received - atStart
print(
    "{\"subscribed\":\(subscribers.open.count),\"first\":\(list(firsts)),\"last\":\(list(lasts)),\"answer\":\(list(answers)),"
        + "\"deltas\":\(counts[0] + tail[0]),\"windows\":\(counts[1]),\"tailWindows\":\(tail[1]),\"bytes\":\(bytes)}")
