// What the compiled stream readers of the live benchmarks share (bench-live, bench-windows):
// sockets to the local server, thousands of event streams read on one thread with epoll(7), and
// a blocking keep-alive connection for writes.
import CLinuxEvents
import Glibc

/// Writes straight to a descriptor: unbuffered, so the caller sees `ready` at once.
public func say(_ text: String, to descriptor: Int32 = 1) {
    var bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress, $0.count) }
}

public func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

public func connectLocal(_ port: UInt16) -> Int32 {
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

public func sendAll(_ descriptor: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var sent = 0
    while sent < bytes.count {
        let written = bytes[sent...].withUnsafeMutableBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        if written <= 0 { say("send failed", to: 2); exit(1) }
        sent += written
    }
    bytes.removeAll()
}

public func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    haystack.withUnsafeBufferPointer { firstIndex(of: needle, in: $0) }
}

/// Where `needle` first starts in `haystack`: its first byte found by memchr(3), the rest
/// compared there (Glibc's module has no memmem).
public func firstIndex(of needle: [UInt8], in haystack: UnsafeBufferPointer<UInt8>) -> Int? {
    guard let base = haystack.baseAddress, let head = needle.first, haystack.count >= needle.count else { return nil }
    return needle.withUnsafeBufferPointer { pattern in
        var start = 0
        let lastStart = haystack.count - pattern.count
        while start <= lastStart, let found = memchr(base + start, Int32(head), lastStart - start + 1) {
            let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            if memcmp(base + at, pattern.baseAddress!, pattern.count) == 0 { return at }
            start = at + 1
        }
        return nil
    }
}

/// The subscribers' sockets under epoll(7); reads whatever is ready and notes, per socket, the
/// first time a marker went by. A marker split across two reads is found in the kept tail.
/// (poll(2) made the reader walk all 10,000 sockets, in the kernel and here, for each wake-up:
/// its own CPU, on the server's two cores, was in the figures it printed. For the same reason
/// a read allocates nothing: each socket's tail sits in one table, indexed by descriptor, and
/// the text a read shows is that tail and the new bytes, side by side in one buffer. With an
/// array made for each read, and dictionaries by descriptor, the reader took 58 ms of CPU a
/// commit with 9,725 windows; without, 50, most of it the kernel's recv; the server took
/// about 250.)
public final class Subscribers {
    private static let tailLength = 96
    private let poller = epoll_create1(Int32(EPOLL_CLOEXEC))
    private var events = [epoll_event](repeating: epoll_event(), count: 1_024)
    /// Each descriptor's last `tailLength` bytes (`tailCounts` of them so far).
    private var tails: [UInt8] = []
    private var tailCounts: [Int] = []
    public private(set) var open = Set<Int32>()
    private var isOpen: [Bool] = []
    /// Bytes read from all subscribers so far.
    public private(set) var received = 0
    /// A descriptor's tail, then what one read brings.
    private var buffer = [UInt8](repeating: 0, count: Subscribers.tailLength + (1 << 18))

    public init() {}

    public func add(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = descriptor
        _ = epoll_ctl(poller, EPOLL_CTL_ADD, descriptor, &event)
        let at = Int(descriptor)
        if at >= isOpen.count {
            let count = at + 1024
            isOpen += repeatElement(false, count: count - isOpen.count)
            tailCounts += repeatElement(0, count: count - tailCounts.count)
            tails += repeatElement(0, count: count * Self.tailLength - tails.count)
        }
        open.insert(descriptor)
        isOpen[at] = true
        tailCounts[at] = 0
    }

    /// Reads until each of `watched` still open (every open subscriber when nil) has shown
    /// `marker`, or `deadline` passes; returns when the first and the last did, and how many did.
    public func await(_ marker: String, among watched: Set<Int32>? = nil, deadline: Double) -> (first: Double?, last: Double?, reached: Int) {
        let needle = Array(marker.utf8)
        return watch(among: watched, deadline: deadline) { text, _ in firstIndex(of: needle, in: text) != nil }
    }

    /// Reads until each of `watched` still open (every open subscriber when nil) has read text
    /// that `shows` (given what came in its last read, after the tail of the reads before it,
    /// and where the new bytes start), or `deadline` passes.
    public func watch(among watched: Set<Int32>? = nil, deadline: Double, shows: (UnsafeBufferPointer<UInt8>, Int) -> Bool) -> (
        first: Double?, last: Double?, reached: Int
    ) {
        var waiting = [Bool](repeating: false, count: isOpen.count)
        var left = 0
        for descriptor in watched ?? open where isOpen[Int(descriptor)] {
            waiting[Int(descriptor)] = true
            left += 1
        }
        var seen = 0
        var first: Double?
        var last: Double?
        let tailLength = Self.tailLength
        while left > 0 && now() < deadline {
            let ready = epoll_wait(poller, &events, Int32(events.count), 200)
            if ready <= 0 { continue }
            for index in 0..<Int(ready) {
                let descriptor = events[index].data.fd
                let at = Int(descriptor)
                guard isOpen[at] else { continue }
                let kept = tailCounts[at]
                let read = buffer.withUnsafeMutableBytes { bytes in
                    tails.withUnsafeBytes { tails in
                        bytes.baseAddress!.copyMemory(from: tails.baseAddress! + at * tailLength, byteCount: kept)
                    }
                    return recv(descriptor, bytes.baseAddress! + kept, bytes.count - kept, 0)
                }
                if read < 0 { continue }
                if read == 0 {
                    // Closed by the server (refused or dropped): it will not see the marker.
                    // (Closing it takes it out of the epoll set.)
                    close(descriptor)
                    open.remove(descriptor)
                    isOpen[at] = false
                    if waiting[at] {
                        waiting[at] = false
                        left -= 1
                    }
                    continue
                }
                received += read
                let length = kept + read
                buffer.withUnsafeBufferPointer { text in
                    let text = UnsafeBufferPointer(rebasing: text[0..<length])
                    if waiting[at] && shows(text, kept) {
                        waiting[at] = false
                        left -= 1
                        seen += 1
                        last = now()
                        if first == nil { first = last }
                    }
                    let keep = min(length, tailLength)
                    tails.withUnsafeMutableBytes { tails in
                        (tails.baseAddress! + at * tailLength).copyMemory(from: text.baseAddress! + length - keep, byteCount: keep)
                    }
                    tailCounts[at] = keep
                }
            }
        }
        return (first, last, seen)
    }
}

/// A blocking keep-alive connection for the writer's updates.
public func request(_ descriptor: Int32, _ method: String, _ path: String, _ body: String) -> String {
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
