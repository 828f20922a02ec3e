import CLinuxEvents
import Synchronization

import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Notices at once when a client closes a connection that sends a stream.
///
/// libmicrohttpd stops watching a connection's socket while it is suspended, which a stream's
/// connection is whenever it has nothing to send: a client that closed an idle stream would be
/// noticed only at the next write (a heartbeat, seconds later), and its subscriber slot held
/// until then, so a client opening and closing streams in a loop could fill every slot. This
/// watches each stream's socket for the peer's close (`EPOLLRDHUP`) on one thread of its own,
/// and ends the stream when it comes, which resumes the connection and lets libmicrohttpd
/// close it.
///
/// Registrations are never removed by socket number: a closed socket leaves the epoll set by
/// itself, and a number reused by a new connection must not lose the new one's registration.
/// Each registration carries a key instead, and a key no longer listed is ignored.
final class HangupWatcher: Sendable {
    private let epoll: Int32
    /// Written once by `stop` to wake the thread (key 0).
    private let wakeup: Int32
    private struct Watched {
        var nextKey: UInt64 = 1
        var streams: [UInt64: HTTPStream] = [:]
    }
    private let watched = NIOLockedValueBox(Watched())
    private let thread = Mutex<pthread_t?>(nil)

    init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeup = eventfd(0, Int32(EFD_CLOEXEC))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = 0
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, &event)
        start()
    }

    /// Watches `socket`, which sends `stream`; returns the key to `forget` it by.
    func watch(socket: Int32, stream: HTTPStream) -> UInt64 {
        let key = watched.withLockedValue { watched in
            let key = watched.nextKey
            watched.nextKey += 1
            watched.streams[key] = stream
            return key
        }
        var event = epoll_event()
        event.events = EPOLLRDHUP.rawValue | EPOLLONESHOT.rawValue
        event.data.u64 = key
        // The socket may still be listed from an earlier stream on the same kept-alive
        // connection: the registration then takes the new key.
        if epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) != 0 && errno == EEXIST {
            _ = epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event)
        }
        return key
    }

    /// The stream has ended: a close of its socket from now on means nothing to it.
    func forget(_ key: UInt64) {
        _ = watched.withLockedValue { $0.streams.removeValue(forKey: key) }
    }

    private func start() {
        let handle = startThread { [self] in run() }
        thread.withLock { $0 = handle }
    }

    private func run() {
        ThreadPool.nameThread("http-hangups")
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while true {
            let ready = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), -1) }
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            for index in 0..<Int(ready) {
                let key = events[index].data.u64
                if key == 0 { return }
                let stream = watched.withLockedValue { $0.streams.removeValue(forKey: key) }
                stream?.hangUp()
            }
        }
    }

    /// Ends the thread and waits for it; nothing is watched after.
    func stop() {
        guard let handle = thread.withLock({ $0.take() }) else { return }
        var one: UInt64 = 1
        _ = write(wakeup, &one, 8)
        pthread_join(handle, nil)
        watched.withLockedValue { $0.streams = [:] }
        close(wakeup)
        close(epoll)
    }
}
