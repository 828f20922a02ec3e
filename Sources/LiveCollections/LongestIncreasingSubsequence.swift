/// Marks a longest strictly increasing subsequence of `values` (patience sorting with
/// back-links, O(n log n), O(n) when the values are already mostly in order).
///
/// The elements *not* marked are the fewest that must move for the rest to keep their order.
/// Among equally long subsequences it prefers the one ending in the latest elements.
@usableFromInline
func longestIncreasingSubsequenceMask(_ values: UnsafeBufferPointer<Int32>) -> [Bool] {
    let count = values.count
    var inSubsequence = [Bool](repeating: false, count: count)
    guard count > 0 else { return inSubsequence }
    // tails[k]: index of the smallest value that ends an increasing run of length k + 1.
    var tails = [Int32]()
    tails.reserveCapacity(min(count, 1 << 16))
    var previous = [Int32](repeating: -1, count: count)
    previous.withUnsafeMutableBufferPointer { previous in
        for i in 0..<count {
            let value = values[i]
            if let last = tails.last, values[Int(last)] >= value {
                // First tail whose value is >= value.
                var low = 0
                var high = tails.count - 1
                while low < high {
                    let mid = (low + high) >> 1
                    if values[Int(tails[mid])] < value { low = mid + 1 } else { high = mid }
                }
                tails[low] = Int32(truncatingIfNeeded: i)
                previous[i] = low > 0 ? tails[low - 1] : -1
            } else {
                previous[i] = tails.last ?? -1
                tails.append(Int32(truncatingIfNeeded: i))
            }
        }
        var index = Int(tails[tails.count - 1])
        while index >= 0 {
            inSubsequence[index] = true
            index = Int(previous[index])
        }
    }
    return inSubsequence
}
