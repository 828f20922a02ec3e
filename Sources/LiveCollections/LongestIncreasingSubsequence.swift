/// Marks a longest strictly increasing subsequence of `values` (patience sorting with
/// back-links, O(n log n), O(n) when the values are already mostly in order).
///
/// The elements *not* marked are the fewest that must move for the rest to keep their order.
/// Among equally long subsequences it prefers the one ending in the latest elements.
@usableFromInline
func longestIncreasingSubsequenceMask(_ values: UnsafeBufferPointer<Int32>) -> [Bool] {
    // With capacity 0 the initializer stores the count into the shared empty-array singleton,
    // which ThreadSanitizer reports as a race between any two threads doing so.
    guard !values.isEmpty else { return [] }
    return [Bool](unsafeUninitializedCapacity: values.count) { mask, initialized in
        markLongestIncreasingSubsequence(values, in: mask)
        initialized = values.count
    }
}

/// `longestIncreasingSubsequenceMask` into memory the caller owns (`mask.count == values.count`,
/// initialized or not): its working lists take one temporary allocation, on the stack where
/// they are small.
@usableFromInline
func markLongestIncreasingSubsequence(_ values: UnsafeBufferPointer<Int32>, in mask: UnsafeMutableBufferPointer<Bool>) {
    let count = values.count
    guard count > 0 else { return }
    mask.initialize(repeating: false)
    withUnsafeTemporaryAllocation(of: Int32.self, capacity: 2 * count) { scratch in
        // tails[k]: index of the smallest value that ends an increasing run of length k + 1.
        let tails = UnsafeMutableBufferPointer(rebasing: scratch[0..<count])
        // previous[i]: the index before i in the run that i ends.
        let previous = UnsafeMutableBufferPointer(rebasing: scratch[count..<2 * count])
        var length = 0
        for i in 0..<count {
            let value = values[i]
            if length > 0, values[Int(tails[length - 1])] >= value {
                // First tail whose value is >= value.
                var low = 0
                var high = length - 1
                while low < high {
                    let mid = (low + high) >> 1
                    if values[Int(tails[mid])] < value { low = mid + 1 } else { high = mid }
                }
                tails[low] = Int32(truncatingIfNeeded: i)
                previous[i] = low > 0 ? tails[low - 1] : -1
            } else {
                previous[i] = length > 0 ? tails[length - 1] : -1
                tails[length] = Int32(truncatingIfNeeded: i)
                length += 1
            }
        }
        var index = Int(tails[length - 1])
        while index >= 0 {
            mask[index] = true
            index = Int(previous[index])
        }
    }
}
