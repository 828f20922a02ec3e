import Foundation
import LiveDeltaKit
import Observation
import TestSupport
import Testing

/// An `ObservedLiveList` following a session tells Observation of each change it shows, and
/// tells observers of one property nothing when only another changed.
@Suite struct ObservedLiveListTests {
    /// Whether an observed read's value changed since tracking began.
    final class Flag: @unchecked Sendable {  // guarded by `lock`
        private let lock = NSLock()
        private var raised = false
        func raise() { lock.withLock { raised = true } }
        var isRaised: Bool { lock.withLock { raised } }
    }

    @MainActor
    static func tracking(_ read: @escaping () -> Void) -> Flag {
        let flag = Flag()
        withObservationTracking(read) { flag.raise() }
        return flag
    }

    @MainActor
    static func until(_ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(20)
        while !condition() {
            guard Date() < deadline else {
                Issue.record("waited 20 s")
                throw CancellationError()
            }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
    }

    @Test @MainActor func aFollowedSessionIsObservedVersionByVersion() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        _ = try await client.putSession("observed", SessionCollection.items([Row(id: 1, v: 0)]))
        let observed = ObservedLiveList<Row>()
        let items = Self.tracking { _ = observed.items }
        let sections = Self.tracking { _ = observed.sections }
        let following = Task { try await observed.follow("observed", with: client) }
        defer { following.cancel() }
        try await Self.until { observed.version == 0 }
        #expect(items.isRaised && observed.items == [Row(id: 1, v: 0)] && observed.connection == .live)
        let again = Self.tracking { _ = observed.items }
        let version = Self.tracking { _ = observed.version }
        _ = try await client.update("observed", to: SessionCollection.items([Row(id: 2, v: 0), Row(id: 1, v: 1)]))
        try await Self.until { observed.version == 1 }
        #expect(again.isRaised && version.isRaised && observed.items == [Row(id: 2, v: 0), Row(id: 1, v: 1)])
        #expect(!sections.isRaised, "a flat session's sections never changed")
        #expect(observed.list.version == 1)
    }
}
