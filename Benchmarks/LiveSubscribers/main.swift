// The subscriber side of `make bench-live`: holds many `GET /sessions/{id}/events` streams on
// one thread with poll(2) and times each commit from the moment its update is sent to the moment
// the first and the last subscriber have read its event. A compiled reader, so that the
// figure is the server's and not the reader's (a Python loop over 10,000 sockets is slower
// than the server it measures).
//
// Usage: LiveSubscribers PORT SESSION SUBSCRIBERS ROUNDS VERSION [COMMAND]
//   VERSION is the session's version before the first round. With COMMAND (a shell command,
//   run with ROUND set), each round runs it instead of posting an update: a commit that comes
//   from elsewhere (a database a source reads), timed from the moment it starts. Prints `ready` once every
//   subscriber has its reset, waits for a line on standard input (the caller measures memory
//   meanwhile), then runs ROUNDS updates and prints one JSON object:
//   {"subscribed": n, "first": [s...], "last": [s...], "answer": [s...]}.
import BenchStreams
import Glibc

let arguments = CommandLine.arguments
guard arguments.count == 6 || arguments.count == 7, let port = UInt16(arguments[1]), let count = Int(arguments[3]),
    let rounds = Int(arguments[4]), let startVersion = Int(arguments[5])
else {
    print("usage: LiveSubscribers PORT SESSION SUBSCRIBERS ROUNDS VERSION [COMMAND]")
    exit(2)
}
let session = arguments[2]

func items(_ round: Int) -> String {
    "{\"items\":[" + (0..<50).map { "{\"id\":\($0),\"round\":\($0 == round % 50 ? round : 0)}" }.joined(separator: ",") + "]}"
}

let subscribers = Subscribers()
// In batches within the listen backlog, each batch in before the next.
for batchStart in stride(from: 0, to: count, by: 250) {
    var batch = Set<Int32>()
    for _ in 0..<min(250, count - batchStart) {
        let descriptor = connectLocal(port)
        sendAll(descriptor, "GET /sessions/\(session)/events?format=keyed HTTP/1.1\r\nHost: x\r\n\r\n")
        subscribers.add(descriptor)
        batch.insert(descriptor)
    }
    _ = subscribers.await("event: reset", among: batch, deadline: now() + 30)
}
say("ready \(subscribers.open.count)")
_ = readLine()

let writer = connectLocal(port)
var firsts: [Double] = []
var lasts: [Double] = []
var answers: [Double] = []
for round in 1...rounds {
    let version = startVersion + round
    let started = now()
    if arguments.count == 7 {
        let status = system("ROUND=\(round); export ROUND; \(arguments[6])")
        if status != 0 { say("the command answered \(status) in round \(round)", to: 2) }
    } else {
        _ = request(writer, "POST", "/sessions/\(session)/update", items(1000 + round))
    }
    answers.append(now() - started)
    let (first, last, reached) = subscribers.await(".\(version)\nevent: delta", deadline: now() + 20)
    if reached < subscribers.open.count {
        say("\(subscribers.open.count - reached) subscribers did not get version \(version) within 20 s", to: 2)
    }
    if let first, let last {
        firsts.append(first - started)
        lasts.append(last - started)
    }
}
func list(_ values: [Double]) -> String { "[" + values.map { "\($0)" }.joined(separator: ",") + "]" }
print("{\"subscribed\":\(subscribers.open.count),\"first\":\(list(firsts)),\"last\":\(list(lasts)),\"answer\":\(list(answers))}")
