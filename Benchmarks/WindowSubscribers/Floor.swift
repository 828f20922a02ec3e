// What the kernel alone takes to carry one event to each of many subscribers on this machine:
// `WindowSubscribers floor COUNT BYTES ROUNDS` connects COUNT loopback sockets to itself, and in
// each round two threads (the server's event loops are two on two cores) send BYTES to each
// socket's other end while the same reader as the real runs (`Subscribers`, epoll) reads them.
// Nothing is computed, rendered or resumed: the time to the last reader is what sends and reads
// alone cost beside each other. Prints one JSON object: {"first": [s], "last": [s]}.
import BenchStreams
import Glibc

/// One sending thread's sockets and the event it sends to each.
private final class Sends {
    let descriptors: [Int32]
    let event: [UInt8]

    init(_ descriptors: [Int32], _ event: [UInt8]) {
        self.descriptors = descriptors
        self.event = event
    }

    func run() {
        event.withUnsafeBytes { bytes in
            for descriptor in descriptors {
                var sent = 0
                while sent < bytes.count {
                    let written = send(descriptor, bytes.baseAddress! + sent, bytes.count - sent, 0)
                    if written <= 0 { break }
                    sent += written
                }
            }
        }
    }
}

/// Runs `sends` on a thread of its own; returns the thread, to join.
private func start(_ sends: Sends) -> pthread_t {
    var thread = pthread_t()
    let context = Unmanaged.passRetained(sends).toOpaque()
    let started = pthread_create(
        &thread, nil,
        { context in
            let sends = Unmanaged<Sends>.fromOpaque(context!).takeRetainedValue()
            sends.run()
            return nil
        }, context)
    if started != 0 {
        say("pthread_create failed", to: 2)
        exit(1)
    }
    return thread
}

func runFloor(count: Int, bytes: Int, rounds: Int) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(listener, pointer, length) == 0 && listen(listener, 4096) == 0 && getsockname(listener, pointer, &length) == 0
        }
    }
    if !bound {
        say("bind: \(String(cString: strerror(errno)))", to: 2)
        exit(1)
    }
    let subscribers = Subscribers()
    var senders: [Int32] = []
    for _ in 0..<count {
        let reader = connectLocal(UInt16(bigEndian: address.sin_port))
        let sender = accept(listener, nil, nil)
        if sender < 0 {
            say("accept: \(String(cString: strerror(errno)))", to: 2)
            exit(1)
        }
        var on: Int32 = 1
        setsockopt(sender, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        subscribers.add(reader)
        senders.append(sender)
    }
    var firsts: [Double] = []
    var lasts: [Double] = []
    for round in 1...rounds {
        // Shaped as a window's delta, so that the reader does what it does in the real runs.
        let head = Array("id: k.\(round)~0-50\nevent: delta\ndata: {".utf8)
        let event = head + [UInt8](repeating: UInt8(ascii: "x"), count: max(0, bytes - head.count - 3)) + Array("}\n\n".utf8)
        let versionMark = Array(".\(round)~".utf8)
        let half = senders.count / 2
        let started = now()
        let threads = [Array(senders[..<half]), Array(senders[half...])].map { start(Sends($0, event)) }
        let (first, last, reached) = subscribers.watch(deadline: now() + 20) { text, _ in showsDelta(text, versionMark: versionMark) }
        for thread in threads { pthread_join(thread, nil) }
        if reached < count { say("\(count - reached) of \(count) sockets did not read round \(round)", to: 2) }
        if let first, let last {
            firsts.append(first - started)
            lasts.append(last - started)
        }
    }
    print("{\"first\":\(list(firsts)),\"last\":\(list(lasts))}")
}
