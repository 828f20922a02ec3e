import MicroHTTP
import Testing

/// Shared stream bytes and the unsent budget, on streams no connection has taken yet (what a
/// writer sees before the server sends anything).
@Suite struct StreamBytesTests {
    @Test func bytesSharedByManyStreamsCountOnceAndAreFreedWithTheLast() {
        let budget = UnsentBudget(limit: 1_000)
        let event = StreamBytes([UInt8](repeating: 7, count: 600))
        var streams = (0..<100).map { _ in HTTPStream(maxBuffered: 1_000, budget: budget) }
        for stream in streams { #expect(stream.write([event])) }
        // 100 streams hold it, and the budget counts it once.
        #expect(budget.bytes == 600)
        // Another 600 bytes of their own do not fit beside it: that stream is dropped, and
        // gives back what it held.
        let other = HTTPStream(maxBuffered: 1_000, budget: budget)
        #expect(!other.write([StreamBytes([UInt8](repeating: 1, count: 600))]))
        #expect(other.dropped == .budget && budget.bytes == 600)
        streams[0].abort()
        #expect(budget.bytes == 600)
        streams.removeAll()
        // Never sent: the last stream to let go gives the bytes back.
        #expect(budget.bytes == 0)
    }

    @Test func oneWriteLargerThanTheBufferIsTakenWholeAndOnlyOne() {
        let budget = UnsentBudget(limit: 1 << 20)
        let stream = HTTPStream(maxBuffered: 100, budget: budget)
        #expect(stream.write(Array("retry: 1000\n\n".utf8)))
        // A reset larger than the buffer: taken, as the client will read it.
        #expect(stream.write([StreamBytes([UInt8](repeating: 2, count: 10_000))]))
        // Small events behind it count against the buffer, the large one not.
        #expect(stream.write([UInt8](repeating: 3, count: 50)))
        #expect(stream.buffered == 13 + 10_000 + 50)
        // A second large one while the first is unsent: the client has fallen behind.
        #expect(!stream.write([StreamBytes([UInt8](repeating: 4, count: 10_000))]))
        #expect(stream.dropped == .slowReader && budget.bytes == 0)
    }

    @Test func aStreamPastItsBufferIsDroppedAndWritesNothingMore() {
        let stream = HTTPStream(maxBuffered: 100)
        #expect(stream.write([UInt8](repeating: 1, count: 60)))
        #expect(!stream.write([UInt8](repeating: 1, count: 60)))
        #expect(stream.dropped == .slowReader && !stream.isOpen)
        #expect(!stream.write([UInt8](repeating: 1, count: 1)))
    }
}
