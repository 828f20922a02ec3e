import LiveDeltaService

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// What a run of store operations came to: successes by operation, refusals by operation and
/// reason, so that a test asserts which refusals happened and that each operation went through,
/// not only what the store holds afterwards. Safe to share between threads.
final class StoreOutcomes: Sendable {
    private let counts = NIOLockedValueBox<[String: Int]>([:])

    /// Runs `operation` under `name`, counting it as "name" or "name: reason"; whether it
    /// went through.
    @discardableResult
    func run(_ name: String, _ operation: () throws(SessionError) -> Void) -> Bool {
        let key: String
        do throws(SessionError) {
            try operation()
            key = name
        } catch {
            key = "\(name): \(Self.reason(error))"
        }
        counts.withLockedValue { $0[key, default: 0] += 1 }
        return key == name
    }

    /// How many times `name` succeeded.
    func succeeded(_ name: String) -> Int { counts.withLockedValue { $0[name] ?? 0 } }

    /// The refusals, as "operation: reason", those in `allowed` left out.
    func refusals(except allowed: Set<String>) -> [String] {
        counts.withLockedValue { $0.keys.filter { $0.contains(":") && !allowed.contains($0) }.sorted() }
    }

    /// Every operation counted, succeeded or refused.
    var total: Int { counts.withLockedValue { $0.values.reduce(0, +) } }

    static func reason(_ error: SessionError) -> String {
        switch error {
        case .notFound: "notFound"
        case .versionMismatch: "versionMismatch"
        case .kindMismatch: "kindMismatch"
        case .duplicate: "duplicate"
        case .tooManyItems: "tooManyItems"
        case .storeFull: "storeFull"
        case .tooLarge: "tooLarge"
        case .bytesFull: "bytesFull"
        case .tenantFull: "tenantFull"
        case .optionsChanged: "optionsChanged"
        case .conflict: "conflict"
        case .storeUnavailable: "storeUnavailable"
        case .outcomeUnknown: "outcomeUnknown"
        case .internalFailure: "internalFailure"
        case .refused: "refused"
        }
    }
}
