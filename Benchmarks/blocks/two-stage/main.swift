// A two-stage reader (stage one `StructuralIndex`, stage two `TwoStageWalk`) beside ByteJSON's
// one-pass scanner, on the 100,000-movie body: each reads the array's items with their
// meaning hashes and ranges and their ids, as the service's reader does before its records.
// Compiled as one module with ByteJSON's sources (run.sh), so both use the same hashing and
// number reading, and the two-stage items are checked equal to the scanner's before timing.
// Prints medians in turns; asserts nothing but that equality.
import Foundation

let path = CommandLine.arguments[1]
let text = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
let megabytes = Double(text.count) / 1_000_000
let id = JSONName("id")

/// The scanner's reading, item by item, as `CollectionReader` walks.
func scannerItems(_ bytes: UnsafeBufferPointer<UInt8>, into items: inout [ReadItem]) throws(JSONError) {
    var scanner = JSONScanner(bytes)
    var shapes = KeyShapes()
    var more = try scanner.beginArray()
    while more {
        scanner.skipWhitespace()
        let (value, member, _) = try scanner.scanValue(findingMember: id, keyShapes: &shapes)
        items.append(ReadItem(hash: value.hash, start: value.start, end: value.end, idHash: member?.hash ?? 0, idStart: member?.start ?? -1))
        more = try scanner.nextElement()
    }
}

var reference = [ReadItem](), twoStage = [ReadItem]()
try text.withUnsafeBufferPointer { bytes throws(JSONError) in
    try scannerItems(bytes, into: &reference)
    guard TwoStageWalk.items(bytes, id: id, keys: HashedKeys.self, into: &twoStage) else { fatalError("two-stage reader refused the movies") }
}
guard reference == twoStage else { fatalError("two-stage items differ from the scanner's") }
print("two-stage items equal the scanner's: \(reference.count) items, hashes, ranges and ids")

let runs: [(String, (UnsafeBufferPointer<UInt8>) -> Int)] = [
    (
        "one-pass scanner (ByteJSON), items with ids",
        { bytes in
            var items = [ReadItem]()
            items.reserveCapacity(100_000)
            try! scannerItems(bytes, into: &items)
            return items.count
        }
    ),
    (
        "two-stage, items with ids",
        { bytes in
            var items = [ReadItem]()
            items.reserveCapacity(100_000)
            _ = TwoStageWalk.items(bytes, id: id, keys: HashedKeys.self, into: &items)
            return items.count
        }
    ),
    (
        "two-stage, keys not hashed (a bound, wrong hashes)",
        { bytes in
            var items = [ReadItem]()
            items.reserveCapacity(100_000)
            _ = TwoStageWalk.items(bytes, id: id, keys: FreeKeys.self, into: &items)
            return items.count
        }
    ),
    (
        "stage one alone (structural positions)",
        { bytes in
            var index = StructuralIndex(bytes)
            defer { index.release() }
            return index.all()
        }
    ),
]

var times = Array(repeating: [Double](), count: runs.count)
text.withUnsafeBufferPointer { bytes in
    for _ in 0..<15 {
        for (k, run) in runs.enumerated() {
            let start = ContinuousClock.now
            precondition(run.1(bytes) > 0)
            let elapsed = ContinuousClock.now - start
            times[k].append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
        }
    }
}
let medians = times.map { $0.sorted()[$0.count / 2] }
for (k, run) in runs.enumerated() {
    print(
        String(
            format: "%@: median %.2f ms (%.0f MB/s), %.2fx the scanner's time", run.0, medians[k], megabytes / medians[k] * 1000,
            medians[k] / medians[0]))
}
