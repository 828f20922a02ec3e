import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// Which sessions sources feed, kept where every replica sees them, and which replica
/// evaluates each: one at a time, under a lease that lapses when its replica dies, so that
/// another takes it over. The bindings' records are the sources' own (what they need to
/// evaluate a session again); this only keeps them.
package protocol SourceLeases: Sendable {
    /// Session `id` is fed from now on, as `record` says (any problem of an earlier binding
    /// gone); this replica holds its lease.
    func bind(_ id: String, record: [UInt8]) throws(SourceLeaseError)

    /// Session `id` is fed by HTTP from now on, or is gone: where `record` is given, only if
    /// the binding is still that one (not one made since, on any replica).
    func unbind(_ id: String, record: [UInt8]?)

    /// The record of the binding of session `id`, whichever replica holds it; nil for a
    /// session fed by HTTP.
    func record(of id: String) throws(SourceLeaseError) -> [UInt8]?

    /// Keeps why session `id`'s source's last result was not committed, for every replica to
    /// show; nil once one is.
    func report(_ id: String, problem: [UInt8]?) throws(SourceLeaseError)

    /// What `report` keeps for session `id`.
    func problem(of id: String) throws(SourceLeaseError) -> [UInt8]?

    /// What `report` keeps, for every session that has a problem now.
    func problems() throws(SourceLeaseError) -> [String: [UInt8]]

    /// Keeps the leases of `held`, answering those this replica no longer holds (another took
    /// them over, or the session is gone), and takes the leases nobody holds, answering their
    /// bindings. Called every `renewal`.
    func renew(_ held: [String]) throws(SourceLeaseError) -> (lost: [String], taken: [(id: String, record: [UInt8])])

    /// How often `renew` is called; a lease lasts a few of these.
    var renewal: Duration { get }
}

/// The leases' store cannot be reached.
package struct SourceLeaseError: Error, CustomStringConvertible {
    package let description: String

    package init(_ description: String) { self.description = description }
}

/// One replica's bindings, in memory: every lease is its own.
package final class LocalSourceLeases: SourceLeases {
    private let records = NIOLockedValueBox<(bindings: [String: [UInt8]], problems: [String: [UInt8]])>(([:], [:]))

    package init() {}

    package func bind(_ id: String, record: [UInt8]) {
        records.withLockedValue { records in
            records.bindings[id] = record
            records.problems[id] = nil
        }
    }

    package func unbind(_ id: String, record: [UInt8]?) {
        records.withLockedValue { records in
            guard record == nil || records.bindings[id] == record else { return }
            records.bindings[id] = nil
            records.problems[id] = nil
        }
    }

    package func record(of id: String) -> [UInt8]? { records.withLockedValue { $0.bindings[id] } }

    package func report(_ id: String, problem: [UInt8]?) { records.withLockedValue { $0.problems[id] = problem } }

    package func problem(of id: String) -> [UInt8]? { records.withLockedValue { $0.problems[id] } }

    package func problems() -> [String: [UInt8]] { records.withLockedValue { $0.problems } }

    package func renew(_ held: [String]) -> (lost: [String], taken: [(id: String, record: [UInt8])]) { ([], []) }

    package var renewal: Duration { .seconds(1) }
}
