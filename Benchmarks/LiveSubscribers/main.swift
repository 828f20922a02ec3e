// The subscriber side of `make bench-live`: holds many `GET /sessions/{id}/events` streams on
// one thread with poll(2) and times each commit from the moment its update is sent to the moment
// the first and the last subscriber have read its event. A compiled reader, so that the
// figure is the server's and not the reader's (a Python loop over 10,000 sockets is slower
// than the server it measures).
//
// Usage: LiveSubscribers PORT SESSION SUBSCRIBERS ROUNDS VERSION
//   VERSION is the session's version before the first round. Prints `ready` once every
//   subscriber has its reset, waits for a line on standard input (the caller measures memory
//   meanwhile), then runs ROUNDS updates and prints one JSON object:
//   {"subscribed": n, "first": [s...], "last": [s...], "answer": [s...]}.
import Glibc

let arguments = CommandLine.arguments
guard arguments.count == 6, let port = UInt16(arguments[1]), let count = Int(arguments[3]),
    let rounds = Int(arguments[4]), let startVersion = Int(arguments[5])
else {
    print("usage: LiveSubscribers PORT SESSION SUBSCRIBERS ROUNDS VERSION")
    exit(2)
}
let session = arguments[2]

/// Writes straight to a descriptor: unbuffered, so the caller sees `ready` at once.
func say(_ text: String, to descriptor: Int32 = 1) {
    var bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress, $0.count) }
}

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func connectLocal() -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    if connected != 0 {
        say("connect: \(String(cString: strerror(errno)))", to: 2)
        exit(1)
    }
    var on: Int32 = 1
    setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    return descriptor
}

func sendAll(_ descriptor: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var sent = 0
    while sent < bytes.count {
        let written = bytes[sent...].withUnsafeMutableBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        if written <= 0 { say("send failed", to: 2); exit(1) }
        sent += written
    }
    bytes.removeAll()
}

func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<start + needle.count].elementsEqual(needle) { return start }
    }
    return nil
}

/// The subscribers' sockets under poll(2); reads whatever is ready and notes, per socket, the
/// first time a marker went by. A marker split across two reads is found in the kept tail.
final class Subscribers {
    var descriptors: [pollfd] = []
    var tails: [Int32: [UInt8]] = [:]
    var open = Set<Int32>()
    var buffer = [UInt8](repeating: 0, count: 1 << 18)

    func add(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        open.insert(descriptor)
        tails[descriptor] = []
    }

    /// Reads until each of `watched` still open (every open subscriber when nil) has shown
    /// `marker`, or `deadline` passes; returns when the first and the last did, and how many did.
    func await(_ marker: String, among watched: Set<Int32>? = nil, deadline: Double) -> (first: Double?, last: Double?, reached: Int) {
        let needle = Array(marker.utf8)
        var waiting = watched ?? open
        var seen = 0
        var first: Double?
        var last: Double?
        while !waiting.isEmpty && now() < deadline {
            if poll(&descriptors, nfds_t(descriptors.count), 200) <= 0 { continue }
            for index in descriptors.indices where descriptors[index].revents != 0 {
                let descriptor = descriptors[index].fd
                descriptors[index].revents = 0
                let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if read < 0 { continue }
                if read == 0 {
                    // Closed by the server (refused or dropped): it will not see the marker.
                    close(descriptor)
                    descriptors[index].fd = -1  // poll skips it from now on
                    open.remove(descriptor)
                    waiting.remove(descriptor)
                    continue
                }
                let text = tails[descriptor, default: []] + buffer[0..<read]
                if waiting.contains(descriptor) && firstIndex(of: needle, in: text) != nil {
                    waiting.remove(descriptor)
                    seen += 1
                    last = now()
                    if first == nil { first = last }
                }
                tails[descriptor] = Array(text.suffix(64))
            }
        }
        return (first, last, seen)
    }
}

/// A blocking keep-alive connection for the writer's updates.
func request(_ descriptor: Int32, _ method: String, _ path: String, _ body: String) -> String {
    sendAll(
        descriptor, "\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let read = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if read <= 0 { say("the writer's connection closed", to: 2); exit(1) }
        received += chunk[0..<read]
        guard let headEnd = firstIndex(of: Array("\r\n\r\n".utf8), in: received) else { continue }
        let head = String(decoding: received[..<headEnd], as: UTF8.self).lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).filter { $0 != " " })
        else { continue }
        if received.count - (headEnd + 4) >= length {
            return String(decoding: received[(headEnd + 4)...], as: UTF8.self)
        }
    }
}

func items(_ round: Int) -> String {
    "{\"items\":[" + (0..<50).map { "{\"id\":\($0),\"round\":\($0 == round % 50 ? round : 0)}" }.joined(separator: ",") + "]}"
}

let subscribers = Subscribers()
// In batches within the listen backlog, each batch in before the next.
for batchStart in stride(from: 0, to: count, by: 250) {
    var batch = Set<Int32>()
    for _ in 0..<min(250, count - batchStart) {
        let descriptor = connectLocal()
        sendAll(descriptor, "GET /sessions/\(session)/events?format=keyed HTTP/1.1\r\nHost: x\r\n\r\n")
        subscribers.add(descriptor)
        batch.insert(descriptor)
    }
    _ = subscribers.await("event: reset", among: batch, deadline: now() + 30)
}
say("ready \(subscribers.open.count)")
_ = readLine()

let writer = connectLocal()
var firsts: [Double] = []
var lasts: [Double] = []
var answers: [Double] = []
for round in 1...rounds {
    let version = startVersion + round
    let started = now()
    _ = request(writer, "POST", "/sessions/\(session)/update", items(1000 + round))
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
