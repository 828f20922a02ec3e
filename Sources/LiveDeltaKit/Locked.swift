import Foundation

/// A value behind a lock, for state shared between a client's tasks and URLSession's delegate
/// queue. `Synchronization.Mutex` needs iOS 18; this runs from iOS 15.
// @unchecked Sendable: every read and write of `stored` holds `lock`.
final class Locked<Value>: @unchecked Sendable {  // guarded by `lock`; see above
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }

    // lock() and unlock(), not NSLocking.withLock, which Apple's Foundation has from iOS 17.
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }
}
