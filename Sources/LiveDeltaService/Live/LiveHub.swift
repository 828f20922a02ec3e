import Dispatch
import Logging
import MicroHTTP
import Synchronization

import struct NIOConcurrencyHelpers.NIOLockedValueBox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Live sessions: a feed for each session someone follows, fed by the session store's
/// observer calls, and one thread that sends heartbeats, ends long polls at their deadline and
/// lets go of feeds nobody has followed for a while.
///
/// Bounded: subscribers in all (`maxSubscribers`) and per session; each feed's history in
/// versions and bytes; each subscriber's unsent bytes (a subscriber that does not read is
/// dropped past them, never waited for). Feeds exist only for sessions followed now or within
/// `linger`, so a commit to any other session costs one dictionary look-up.
package final class LiveHub: SessionObserver {
    package struct Limits: Sendable {
        /// Subscribers at once, all sessions together (503 past it).
        package var maxSubscribers = 10_000
        package var maxSubscribersPerSession = 1_000
        /// Seconds between comment heartbeats on an idle stream.
        package var heartbeatSeconds = 15
        /// What a stream tells clients to wait before reconnecting (`retry:`), in milliseconds.
        package var retryMilliseconds = 2_000
        /// Steps a feed keeps for resuming subscribers, and the bytes they may take (the
        /// latest is always kept).
        package var historyVersions = 256
        package var historyBytes = 64 << 20
        /// Bytes written to one subscriber and not yet read by it, past which it is dropped
        /// (besides one event larger than this, such as a large session's reset, that it is
        /// still reading).
        package var subscriberBufferBytes = 4 << 20
        /// Bytes written to all subscribers and not yet read, each event counted once however
        /// many subscribers it goes to; a subscriber whose event does not fit is dropped, and a
        /// new one refused (503).
        package var maxUnsentBytes = 256 << 20
        /// Subscribers of one tenant's sessions at once (429 past it); tokens name the tenant,
        /// so without them there is one tenant, bounded by `maxSubscribers` alone.
        package var maxSubscribersPerTenant = 2_500
        /// Seconds a feed is kept after its last subscriber left, so that one reconnecting can
        /// resume from the history.
        package var lingerSeconds = 300
        /// The longest long poll, in seconds.
        package var maxWaitSeconds = 60
        /// The most rows a window (read or followed) may ask for, overscan not counted.
        package var maxWindowRows = 1_000

        package init() {}
    }

    package let limits: Limits
    /// What every subscriber's stream counts its unsent bytes against.
    package let unsent: UnsentBudget
    private let feeds = NIOLockedValueBox<[String: LiveFeed]>([:])
    private let subscribers = Atomic<Int>(0)
    /// Subscribers of each tenant's sessions, where it has some.
    private let tenantSubscribers = NIOLockedValueBox<[Substring: Int]>([:])
    private let stopping = Atomic<Bool>(false)
    /// Where subscribers are written to: a thread per core. Its queue holds a job per feed at
    /// most (a feed asks again only once its last pass has begun).
    private let fanOut = ThreadPool(name: "live-fanout", threads: HTTPServer.processorCount, stackSize: 1 << 20)
    private let ticker = NIOLockedValueBox<Ticker?>(nil)
    private let logger: Logger
    /// Tells the session store which sessions are followed, about every ten seconds.
    private let follow: @Sendable ([String]) -> Void
    /// Told the subscribers and unsent bytes now, about once a second (for the gauges).
    private let report: @Sendable (_ subscribers: Int, _ unsentBytes: Int) -> Void
    /// A shared store's log of a session's steps from a version on (empty for the memory store).
    private let history: @Sendable (_ id: String, _ incarnation: String, _ from: UInt64) -> [LoggedState]
    /// Tells the store that a session's feed has started from a read (`feedStarted`).
    private let started: @Sendable (_ id: String) -> Void
    private let ticks = Atomic<Int>(0)

    package init(
        limits: Limits = Limits(), logger: Logger = Logger(label: "livedelta.live"), follow: @escaping @Sendable ([String]) -> Void = { _ in },
        report: @escaping @Sendable (Int, Int) -> Void = { _, _ in },
        history: @escaping @Sendable (String, String, UInt64) -> [LoggedState] = { _, _, _ in [] },
        started: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.history = history
        self.started = started
        self.limits = limits
        self.unsent = UnsentBudget(limit: limits.maxUnsentBytes)
        self.logger = logger
        self.follow = follow
        self.report = report
        startTicker()
    }

    /// Subscribers now, all sessions together.
    package var subscriberCount: Int { subscribers.load(ordering: .relaxed) }

    // MARK: - SessionObserver

    package func committed(_ change: SessionChange) { feed(change.id)?.publish(change) }

    package func replaced(_ snapshot: SessionSnapshot) { feed(snapshot.id)?.publish(snapshot) }

    package func committedHere(_ change: SessionChange) { feed(change.id)?.publishChained(change) }

    package func ended(id: String, incarnation: String, reason: SessionEnd) { feed(id)?.publishEnd(reason, incarnation: incarnation) }

    package func stored(_ snapshot: SessionSnapshot, appended: Bool, baseVersion: UInt64?) {
        feed(snapshot.id)?.publish(stored: snapshot, appended: appended, baseVersion: baseVersion)
    }

    // A feed made for a subscriber but not yet started from its read takes no steps read
    // back from storage: they would start it from an older state than the read, and a
    // subscriber resuming between the two would be reset (its join asks for a new read of
    // the log once the feed has started).
    package func follows(id: String) -> Bool { feed(id).map { !$0.isEmpty } ?? false }

    package var followedIDs: [String] { feeds.withLockedValue { $0.filter { !$0.value.isEmpty }.map(\.key) } }

    package func incarnation(of id: String) -> String? { feed(id)?.history.latest?.incarnation }

    package func holds(id: String, incarnation: String, version: UInt64) -> Bool {
        guard let latest = feed(id)?.history.latest else { return false }
        return latest.incarnation == incarnation && latest.version >= version
    }

    /// Sends `event`, no step, to the session's subscribers on this replica.
    func notice(id: String, _ event: LiveEvent) { feed(id)?.notice(event) }

    private func feed(_ id: String) -> LiveFeed? { feeds.withLockedValue { $0[id] } }

    // MARK: - Subscribing

    enum SubscribeError: Error {
        case full(Full)
        case stopping
        case session(SessionError)
        case window(WindowRefusal)
    }

    /// Which limit a refused subscriber met.
    enum Full {
        case server, session, tenant
    }

    /// Adds a subscriber to a session's feed, made where there is none yet (before the
    /// session is read, so that no step committed after the read is missed), and starts it
    /// from `token`.
    /// `spelling` is worked out from the session's options once they are known.
    func subscribe(
        id: String, spelling: (DiffOptions) -> LiveSpelling, sink: any LiveSink, from given: WindowToken?, window: WindowRequest? = nil,
        coalesce: Bool, snapshot: () throws(SessionError) -> SessionSnapshot
    ) throws(SubscribeError) -> LiveSubscriber {
        let token = given?.position
        guard !stopping.load(ordering: .relaxed) else { throw .stopping }
        try admit(id)
        var subscriber: LiveSubscriber?
        var read: SessionSnapshot?
        // The window placed in the read (finding a keyset anchor walks the items): the join
        // takes it where the feed is at the read.
        var readWindow: PlacedWindow?
        for _ in 0..<4 {
            let feed = feeds.withLockedValue { feeds in
                if let feed = feeds[id] { return feed }
                let feed = LiveFeed(
                    id: id,
                    limits: .init(subscribers: limits.maxSubscribersPerSession, versions: limits.historyVersions, bytes: limits.historyBytes),
                    fanOut: fanOut, onLeave: { [weak self] in self?.left($0, id: id) })
                feeds[id] = feed
                return feed
            }
            if read == nil {
                // The store says whether the session exists, and its state seeds an empty feed.
                do throws(SessionError) {
                    let session = try snapshot()
                    subscriber = LiveSubscriber(spelling: spelling(session.options), sink: sink, window: window)
                    read = session
                } catch {
                    left(1, id: id)
                    throw .session(error)
                }
                // A window the session cannot have, or whose anchor it does not hold, is refused
                // here, as a read of it would be.
                if let window, let session = read {
                    do throws(WindowRefusal) {
                        readWindow = try PlacedWindow.place(window, in: session.collection, options: session.options)
                    } catch {
                        left(1, id: id)
                        throw .window(error)
                    }
                }
            }
            guard let subscriber, let session = read else { break }
            // A feed new on this replica (a restart, another replica than before) holds no
            // history: a token behind the read is caught up from the shared store's log, read
            // here, outside the feed's lock.
            var logged: [LoggedState] = []
            if let token, token.incarnation == session.incarnation, token.version < session.version, feed.isEmpty {
                logged = history(id, token.incarnation, token.version)
            }
            switch feed.join(subscriber, from: given, coalesce: coalesce, read: session, readWindow: readWindow, logged: logged) {
            case .joined(let seeded):
                if seeded { started(id) }
                return subscriber
            case .full:
                left(1, id: id)
                throw .full(.session)
            case .removed:
                // Let go of meanwhile: a new feed, read from the store again.
                read = nil
                continue
            }
        }
        left(1, id: id)
        throw .full(.session)
    }

    /// Counts one more subscriber, in all and in the session's tenant, unless either is full.
    private func admit(_ id: String) throws(SubscribeError) {
        guard subscribers.add(1, ordering: .relaxed).newValue <= limits.maxSubscribers else {
            subscribers.subtract(1, ordering: .relaxed)
            throw .full(.server)
        }
        guard let tenant = SessionNamespace.tenant(of: id) else { return }
        let admitted = tenantSubscribers.withLockedValue { counts in
            guard counts[tenant, default: 0] < limits.maxSubscribersPerTenant else { return false }
            counts[tenant, default: 0] += 1
            return true
        }
        guard admitted else {
            subscribers.subtract(1, ordering: .relaxed)
            throw .full(.tenant)
        }
    }

    /// `count` subscribers of session `id` have left (or were never let in after `admit`).
    private func left(_ count: Int, id: String) {
        subscribers.subtract(count, ordering: .relaxed)
        guard let tenant = SessionNamespace.tenant(of: id) else { return }
        tenantSubscribers.withLockedValue { counts in
            let remaining = counts[tenant, default: count] - count
            counts[tenant] = remaining > 0 ? remaining : nil
        }
    }

    /// Subscribers of one tenant's sessions now.
    package func subscriberCount(tenant: String) -> Int { tenantSubscribers.withLockedValue { $0[Substring(tenant)] ?? 0 } }

    /// A subscriber's stream closed (the client went away).
    func leave(_ subscriber: LiveSubscriber, id: String) {
        feed(id)?.remove([subscriber])
    }

    /// Ends every stream with a `shutdown` event telling clients to reconnect, and refuses new
    /// subscribers. It waits for no one: streams are closed after the event is queued.
    package func shutdown() -> Int {
        stopping.store(true, ordering: .relaxed)
        let all = feeds.withLockedValue { Array($0.values) }
        let data = Array("{\"reconnect\":true,\"retry\":\(limits.retryMilliseconds)}".utf8)
        return all.reduce(0) { $0 + $1.finishAll(with: LiveEvent(name: .shutdown, id: nil, data: data)) }
    }

    // MARK: - The ticker

    private func startTicker() {
        let ticker = Ticker(name: "live-ticker") { [weak self] in
            guard let self else { return false }
            self.tick()
            return true
        }
        self.ticker.withLockedValue { $0 = ticker }
    }

    /// Ends the hub's threads (the ticker, the fan-out), after `shutdown`: whoever made the hub
    /// stops it.
    package func stop() {
        ticker.withLockedValue { $0.take() }?.stop()
        fanOut.stop()
    }

    deinit {
        // Let go of without a stop (tests): the threads end by themselves. This may run on
        // one of them, which must not wait for itself.
        ticker.withLockedValue { $0.take() }?.stop(waiting: false)
        fanOut.stop(waiting: false)
    }

    private func tick() {
        let now = monotonicNow()
        let linger = Int64(limits.lingerSeconds) * 1_000_000_000
        let all = feeds.withLockedValue { Array($0.values) }
        var idle: [LiveFeed] = []
        for feed in all {
            _ = feed.tick(now: now)
            if feed.removeIfIdle(now: now, linger: linger) { idle.append(feed) }
        }
        if ticks.add(1, ordering: .relaxed).newValue % 10 == 0 { follow(all.map(\.id)) }
        report(subscriberCount, unsent.bytes)
        guard !idle.isEmpty else { return }
        feeds.withLockedValue { feeds in
            for feed in idle where feeds[feed.id] === feed { feeds[feed.id] = nil }
        }
    }
}
