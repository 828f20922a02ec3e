import Dispatch
import Glibc
import Testing

import struct NIOConcurrencyHelpers.NIOLockedValueBox

@testable import MicroHTTP

@Suite struct ThreadPoolTests {
    /// glibc's `pthread_getattr_np`, which Swift's Glibc module leaves out (it needs _GNU_SOURCE).
    private typealias GetAttributes = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
    private static let getAttributes = unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_getattr_np"), to: GetAttributes.self)

    /// What the thread running a job has: its id and its stack's size.
    private static func currentThread() -> (id: pthread_t, stack: Int) {
        var attributes = pthread_attr_t()
        _ = getAttributes(pthread_self(), &attributes)
        defer { pthread_attr_destroy(&attributes) }
        var size = 0
        pthread_attr_getstacksize(&attributes, &size)
        return (pthread_self(), size)
    }

    /// Handlers recurse on JSON up to the depth limit: every thread of a pool has the stack it
    /// was asked for, whatever the platform's default, and no more threads than allowed run.
    @Test func everyJobRunsOnAThreadWithTheStackAskedForAndNoMoreThreadsThanAllowed() {
        let pool = ThreadPool(name: "test-pool", threads: 3, stackSize: 6 << 20)
        let seen = NIOLockedValueBox<[(id: pthread_t, stack: Int)]>([])
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<40 {
            pool.run {
                // Long enough that jobs overlap and the pool starts all the threads it may.
                usleep(2_000)
                seen.withLockedValue { $0.append(Self.currentThread()) }
                done.signal()
            }
        }
        for _ in 0..<40 { done.wait() }
        let runs = seen.withLockedValue { $0 }
        #expect(runs.count == 40)
        #expect(runs.allSatisfy { $0.stack >= 6 << 20 })
        let threads = Set(runs.map { UInt($0.id) })
        #expect(threads.count == 3)
    }

    /// Jobs wait for a free thread and are taken in the order they came.
    @Test func oneThreadRunsJobsInTheOrderTheyCame() {
        let pool = ThreadPool(name: "test-pool", threads: 1, stackSize: 1 << 20)
        let order = NIOLockedValueBox<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for job in 0..<100 {
            pool.run {
                order.withLockedValue { $0.append(job) }
                done.signal()
            }
        }
        for _ in 0..<100 { done.wait() }
        #expect(order.withLockedValue { $0 } == Array(0..<100))
    }
}
