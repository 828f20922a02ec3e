import Synchronization

/// The id-hash lists of parts (`RedisSessionLayout.idsField`) a replica has read, kept so that
/// it searches a session for another anchor without reading them again: a part's list never
/// changes, as its name is never used again in the session's life, so only the lists of parts
/// written since are read. Bounded in bytes (a million items' lists are 4 MB), the sessions
/// searched least recently going first.
///
/// Where every part of a version has its list, they are also kept in the parts' order for that
/// version: a search of it is then a walk of one array. Found by name, a million items' 5,000
/// lists cost each search of a replica with no copy some 2 ms of hashing and reference counts.
final class IDListCache: Sendable {
    private struct Session {
        var incarnation: [UInt8]?
        var lists: [String: [UInt8]]
        /// `lists` in the order of the parts of version `version` (the same storage).
        var ordered: (version: [UInt8], lists: [[UInt8]])?
        var bytes: Int
        var used: UInt64
    }

    private struct State {
        var sessions: [String: Session] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())
    private let maxBytes: Int

    init(maxBytes: Int = 64 << 20) { self.maxBytes = maxBytes }

    /// The lists kept of session `id` in life `incarnation`, by part name.
    func lists(_ id: String, incarnation: [UInt8]?) -> [String: [UInt8]] {
        state.withLock { state in
            guard let session = state.sessions[id], session.incarnation == incarnation else { return [:] }
            state.clock += 1
            state.sessions[id]?.used = state.clock
            return session.lists
        }
    }

    /// The lists of every part of session `id` at `version` (in life `incarnation`), in the
    /// parts' order; nil where they are not all kept for that version.
    func ordered(_ id: String, incarnation: [UInt8]?, version: [UInt8]) -> [[UInt8]]? {
        state.withLock { state in
            guard let session = state.sessions[id], session.incarnation == incarnation, let ordered = session.ordered,
                ordered.version == version
            else { return nil }
            state.clock += 1
            state.sessions[id]?.used = state.clock
            return ordered.lists
        }
    }

    /// Keeps `lists` as session `id`'s in life `incarnation`, those of parts not in `parts`
    /// (the parts of `version`, in order; dropped since) left out.
    func keep(_ id: String, incarnation: [UInt8]?, _ lists: [String: [UInt8]], parts: [String], version: [UInt8]) {
        let names = Set(parts)
        let kept = lists.filter { names.contains($0.key) }
        let bytes = kept.values.reduce(0) { $0 + $1.count }
        let inOrder = parts.compactMap { kept[$0] }
        let ordered = inOrder.count == parts.count ? (version: version, lists: inOrder) : nil
        state.withLock { state in
            state.bytes -= state.sessions.removeValue(forKey: id)?.bytes ?? 0
            guard bytes <= maxBytes else { return }
            while state.bytes + bytes > maxBytes, let oldest = state.sessions.min(by: { $0.value.used < $1.value.used }) {
                state.bytes -= oldest.value.bytes
                state.sessions[oldest.key] = nil
            }
            state.clock += 1
            state.sessions[id] = Session(incarnation: incarnation, lists: kept, ordered: ordered, bytes: bytes, used: state.clock)
            state.bytes += bytes
        }
    }
}
