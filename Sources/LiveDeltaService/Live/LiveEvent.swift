import ByteJSON
import MicroHTTP
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where a subscriber is: one life of a session (its incarnation) and a version in it. As an
/// event id it reads `<incarnation>.<version>`; clients keep it whole and send it back
/// (`Last-Event-ID`, `since`), so a session replaced or created anew under the same id is never
/// taken for the one the client followed.
struct LivePosition: Equatable, Sendable {
    var incarnation: String
    var version: UInt64

    var token: String { "\(incarnation).\(version)" }

    init(incarnation: String, version: UInt64) {
        self.incarnation = incarnation
        self.version = version
    }

    /// A token as `token` spells it; nil for anything else.
    init?(token: String) {
        guard token.utf8.count <= 64, let dot = token.lastIndex(of: "."), let version = UInt64(token[token.index(after: dot)...]) else {
            return nil
        }
        let incarnation = token[..<dot]
        guard !incarnation.isEmpty, incarnation.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }) else {
            return nil
        }
        self.init(incarnation: String(incarnation), version: version)
    }
}

/// How a subscriber's deltas are spelled: the options each request may choose.
struct LiveSpelling: Hashable, Sendable {
    var format: DeltaFormat
    var changes: ChangeDetail
    var rows: CarriedRows = .all

    /// What its delta events carry besides the delta: a format that leaves out the items'
    /// content (positions only) carries the rows, as a subscriber, unlike a writer, does not
    /// hold the new collection.
    var carried: CarriedCollection {
        guard format == .batch || format == .sequential else { return .none }
        return rows == .changed ? .changedRows : .whole
    }

    func applied(to options: DiffOptions) -> DeltaSpelling {
        var spelling = options.spelling
        spelling.format = format
        spelling.changes = changes
        return spelling
    }
}

/// One event as subscribers receive it: a name, the position it brings the subscriber to, and
/// its data, a JSON object.
struct LiveEvent: Sendable {
    enum Name: String, Sendable {
        /// The whole collection: start again from it.
        case reset
        /// One step, as an update to that version answered it.
        case delta
        /// A window's rows did not change, but where they are or the session's total did.
        case window
        /// The session was deleted or expired: nothing more will come.
        case end
        /// The server is stopping: reconnect (to another replica) and resume.
        case shutdown
        /// The subscriber's token expired: reconnect with a new one and resume.
        case expired
        /// What the session's source last answered could not be committed (the session keeps
        /// its version), or can again: no step, and no id.
        case source
    }

    let name: Name
    let id: String?
    let data: [UInt8]
    /// As `text/event-stream` spells it, rendered once here: one event may go to thousands
    /// of subscribers. The data's line breaks (JSON allows them between tokens; an item's text
    /// is kept as it was sent) each start a `data:` line of their own, which a client joins
    /// again with line feeds: the same JSON.
    let serverSent: StreamBytes
    /// As a long poll lists it, rendered the first time a poll asks, then shared the same way.
    private let polled: PolledForm

    init(name: Name, id: String?, data: [UInt8]) {
        self.name = name
        self.id = id
        self.data = data
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count + 64 + (id?.utf8.count ?? 0))
        if let id {
            bytes += "id: ".utf8
            bytes += id.utf8
            bytes.append(0x0A)
        }
        bytes += "event: ".utf8
        bytes += name.rawValue.utf8
        bytes += "\ndata: ".utf8
        // The data goes in runs between line breaks (JSON written here has none; an item's
        // text as its client sent it may), each break a new `data:` line. A fan-out renders
        // thousands of these a commit: runs, not a byte at a time.
        data.withUnsafeBufferPointer { data in
            // Most have none: two vectorized searches, not a loop a byte at a time.
            guard let base = data.baseAddress, memchr(base, 0x0A, data.count) != nil || memchr(base, 0x0D, data.count) != nil else {
                bytes += data
                return
            }
            var start = 0
            var index = 0
            while index < data.count {
                let byte = data[index]
                if byte == 0x0A || byte == 0x0D {
                    bytes += UnsafeBufferPointer(rebasing: data[start..<index])
                    bytes += "\ndata: ".utf8
                    if byte == 0x0D && index + 1 < data.count && data[index + 1] == 0x0A { index += 1 }
                    start = index + 1
                }
                index += 1
            }
            bytes += UnsafeBufferPointer(rebasing: data[start...])
        }
        bytes += [0x0A, 0x0A]
        serverSent = StreamBytes(bytes)
        polled = PolledForm()
    }

    /// As a long poll lists it: `{"event", "id", "data"}`, rendered once for every poll.
    var pollListed: StreamBytes {
        polled.form.withLock { form in
            if let form { return form }
            var writer = JSONWriter()
            writer.raw("{\"event\":")
            writer.string(name.rawValue)
            if let id {
                writer.raw(",\"id\":")
                writer.string(id)
            }
            writer.raw(",\"data\":")
            data.withUnsafeBufferPointer { writer.raw($0) }
            writer.raw("}")
            let made = StreamBytes(writer.bytes)
            form = made
            return made
        }
    }

    private final class PolledForm: Sendable {
        let form = Mutex<StreamBytes?>(nil)
    }

    static func end(_ reason: SessionEnd, id: String?) -> LiveEvent {
        LiveEvent(name: .end, id: id, data: Array("{\"reason\":\"\(reason.rawValue)\"}".utf8))
    }
}
