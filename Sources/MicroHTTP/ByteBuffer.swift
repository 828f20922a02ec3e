/// Bytes in memory of their own. The server fills a request body into one as it arrives; after
/// that it is only read, and a reader may keep it, and pointers into it, as long as it likes
/// (no copy is needed to hold on to a body).
// @unchecked Sendable: only the thread that fills a buffer writes it, before handing it on;
// afterwards it is read only, and deinit frees it once nobody holds it.
package final class ByteBuffer: @unchecked Sendable {  // written by one thread, then read-only; see above
    private var storage: UnsafeMutableBufferPointer<UInt8>
    package private(set) var count = 0

    init(capacity: Int) {
        storage = .allocate(capacity: max(capacity, 16))
    }

    package convenience init(_ bytes: [UInt8]) {
        self.init(capacity: bytes.count)
        bytes.withUnsafeBytes { append($0) }
    }

    deinit { storage.deallocate() }

    /// An empty body, shared: nothing ever appends to it.
    static let empty = ByteBuffer(capacity: 0)

    /// The bytes so far; stable until the next `append`.
    package var bytes: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: storage.baseAddress, count: count)
    }

    package var array: [UInt8] { Array(bytes) }

    func append(_ more: UnsafeRawBufferPointer) {
        if count + more.count > storage.count {
            let larger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(storage.count * 2, count + more.count))
            _ = larger.initialize(from: storage[..<count])
            storage.deallocate()
            storage = larger
        }
        UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(storage)[count..<count + more.count]).copyMemory(from: more)
        count += more.count
    }
}
