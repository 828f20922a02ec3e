import struct NIOConcurrencyHelpers.NIOLock
import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// Why a holder refused an update.
public enum CollectionDataError: Error, CustomStringConvertible {
    /// The new data holds one id twice.
    case duplicateIdentifier(DuplicateIdentifierError)
    /// The caller insisted on a version that is no longer current.
    case versionMismatch(expected: UInt64, current: UInt64)

    /// Says which id repeats or which versions disagree.
    public var description: String {
        switch self {
        case .duplicateIdentifier(let error): error.description
        case .versionMismatch(let expected, let current):
            "version \(expected) was expected, but the current version is \(current)"
        }
    }
}

/// A snapshot of a holder: its value, version and policy at one moment.
@usableFromInline
struct Versioned<Value: Sendable>: Sendable {
    @usableFromInline var value: Value
    @usableFromInline var version: UInt64
    @usableFromInline var policy: AnimationPolicy

    @usableFromInline
    init(value: Value, version: UInt64, policy: AnimationPolicy) {
        self.value = value
        self.version = version
        self.policy = policy
    }

    /// Throws where a caller insisted on another version than this one.
    @inlinable
    func require(_ expected: UInt64?) throws(CollectionDataError) {
        if let expected, expected != version { throw .versionMismatch(expected: expected, current: version) }
    }
}

/// The shared core of `CollectionData` and `CollectionSectionData`: a value with a version
/// that grows by one per committed write.
///
/// Readers take a short lock for a snapshot. Writers are serialized by a second lock held
/// for the whole write, so each write computes from the state just before it, while readers
/// keep seeing the previous state until the write commits.
@usableFromInline
final class VersionedValue<Value: Sendable>: Sendable {
    private let state: NIOLockedValueBox<Versioned<Value>>
    private let writer = NIOLock()

    @usableFromInline
    init(_ value: Value, policy: AnimationPolicy, version: UInt64 = 0) {
        state = NIOLockedValueBox(Versioned(value: value, version: version, policy: policy))
    }

    @usableFromInline
    var snapshot: Versioned<Value> { state.withLockedValue { $0 } }

    @usableFromInline
    func setPolicy(_ policy: AnimationPolicy) {
        state.withLockedValue { $0.policy = policy }
    }

    /// Runs `body` on the current snapshot and commits the value it returns as the next version.
    /// Where `expectedVersion` is given and differs from the current one, nothing runs.
    @usableFromInline
    func write<Result: Sendable>(
        ifVersion expectedVersion: UInt64?,
        _ body: (Versioned<Value>) throws(CollectionDataError) -> (value: Value, result: Result)
    ) throws(CollectionDataError) -> Result {
        writer.lock()
        defer { writer.unlock() }
        let current = snapshot
        try current.require(expectedVersion)
        let (value, result) = try body(current)
        state.withLockedValue {
            $0.value = value
            $0.version = current.version + 1
        }
        return result
    }
}
