// Times the delta engine through its public API, from another module, on the five scenarios of
// issue #2, issue #13's String-UUID case and issue #58's last-to-front. Prints the median and
// minimum of several runs, the time per item, the change counts and peak memory.
// Usage: EngineBenchmark [scenario number ...]   (all seven when none is given)
import Foundation
import LiveCollections

/// A deterministic generator (SplitMix64), so every run diffs the same data.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct UUIDItem: UniquelyIdentifiable, Sendable {
    let uniqueID: UUID
}

struct StringItem: UniquelyIdentifiable, Sendable {
    let uniqueID: String
}

struct Movie: UniquelyIdentifiable, Sendable {
    let id: Int
    var title: String
    var uniqueID: Int { id }
}

typealias MovieSection = ItemSection<Int, String, Movie>

func uuids(_ count: Int, _ rng: inout SplitMix) -> [UUIDItem] {
    (0..<count).map { _ in
        let a = rng.next(), b = rng.next()
        return UUIDItem(
            uniqueID: UUID(
                uuid: withUnsafeBytes(of: (a, b)) { raw in
                    raw.load(as: uuid_t.self)
                }))
    }
}

/// Shuffles the elements at `positions` among those positions.
func shuffle<T>(_ array: inout [T], at positions: [Int], _ rng: inout SplitMix) {
    let values = positions.map { array[$0] }.shuffled(using: &rng)
    for (position, value) in zip(positions, values) { array[position] = value }
}

/// Issue #2's UUID scenarios: delete `deleted`, insert as many fresh items at `insertAt`
/// (an index after the deletion), shuffle the first `shuffled` positions among themselves.
func uuidScenario(count: Int, deleted: Range<Int>, insertAt: Int, shuffled: Int) -> (old: [UUIDItem], new: [UUIDItem]) {
    var rng = SplitMix(state: UInt64(count))
    let old = uuids(count, &rng)
    var new = old
    new.removeSubrange(deleted)
    new.insert(contentsOf: uuids(deleted.count, &rng), at: insertAt)
    shuffle(&new, at: Array(0..<shuffled), &rng)
    return (old, new)
}

/// Issue #13's case: 5,000 String UUIDs; 1,000 deleted, 1,000 inserted, 200 swapped (100
/// pairs, scattered).
func stringScenario() -> (old: [StringItem], new: [StringItem]) {
    var rng = SplitMix(state: 6)
    let old = uuids(5_000, &rng).map { StringItem(uniqueID: $0.uniqueID.uuidString) }
    var new = old
    for _ in 0..<1_000 { new.remove(at: Int.random(in: 0..<new.count, using: &rng)) }
    for item in uuids(1_000, &rng) { new.insert(StringItem(uniqueID: item.uniqueID.uuidString), at: Int.random(in: 0...new.count, using: &rng)) }
    let swapped = Array((0..<new.count).shuffled(using: &rng).prefix(200))
    for pair in stride(from: 0, to: swapped.count, by: 2) { new.swapAt(swapped[pair], swapped[pair + 1]) }
    return (old, new)
}

func movieScenario() -> (old: [Movie], new: [Movie]) {
    var rng = SplitMix(state: 4)
    let count = 100_000
    let old = (0..<count).map { Movie(id: $0, title: "Movie number \($0)") }
    var new = old
    for _ in 0..<count / 10 { new.remove(at: Int.random(in: 0..<new.count, using: &rng)) }
    for k in 0..<count / 10 {
        new.insert(Movie(id: count + k, title: "New movie \(k)"), at: Int.random(in: 0...new.count, using: &rng))
    }
    for index in (0..<new.count).shuffled(using: &rng).prefix(count / 20) { new[index].title += " (edited)" }
    shuffle(&new, at: Array((0..<new.count).shuffled(using: &rng).prefix(2_000)), &rng)
    return (old, new)
}

func sectionScenario() -> (old: [MovieSection], new: [MovieSection]) {
    var rng = SplitMix(state: 5)
    let sections = 100, perSection = 1_000
    let old = (0..<sections).map { s in
        MovieSection(id: s, header: "Section \(s)", items: (0..<perSection).map { Movie(id: s * perSection + $0, title: "Movie \($0)") })
    }
    var new = old
    for _ in 0..<(sections * perSection / 20) {
        var from = Int.random(in: 0..<sections, using: &rng)
        while new[from].items.isEmpty { from = Int.random(in: 0..<sections, using: &rng) }
        var to = Int.random(in: 0..<sections, using: &rng)
        while to == from { to = Int.random(in: 0..<sections, using: &rng) }
        let item = new[from].items.remove(at: Int.random(in: 0..<new[from].items.count, using: &rng))
        new[to].items.insert(item, at: Int.random(in: 0...new[to].items.count, using: &rng))
    }
    for _ in 0..<5 {
        let section = new.remove(at: Int.random(in: 0..<new.count, using: &rng))
        new.insert(section, at: Int.random(in: 0...new.count, using: &rng))
    }
    return (old, new)
}

/// Peak resident memory of this process so far (VmHWM), in MB.
func peakMemoryMB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return .nan }
    return Double(line.split(separator: " ")[1])! / 1024
}

/// `items`: the items of both collections, for the time per item.
func measure(_ name: String, runs: Int, target: Double, items: Int, _ body: () -> String) {
    var times = [Double]()
    var counts = ""
    for _ in 0..<runs {
        let start = ContinuousClock.now
        counts = body()
        let elapsed = ContinuousClock.now - start
        times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
    }
    times.sort()
    let median = times[times.count / 2]
    print(
        String(
            format: "%@: median %.3f ms, min %.3f ms, %.1f ns an item (%d runs; target <= %.2f ms: %@); %@; peak RSS %.0f MB",
            name, median, times[0], median * 1e6 / Double(items), runs, target, median <= target ? "met" : "MISSED", counts,
            peakMemoryMB()))
}

func describe(_ delta: IndexDelta) -> String {
    "deletions \(delta.deletions.count), insertions \(delta.insertions.count), moves \(delta.moves.count), reloads \(delta.reloads.count)"
}

let scenarios: [Int: () -> Void] = [
    1: {
        let (old, new) = uuidScenario(count: 5_000, deleted: 2_000..<3_000, insertAt: 3_000, shuffled: 200)
        measure("1. 5,000 UUIDs", runs: 101, target: 0.5, items: old.count + new.count) { describe(try! IndexDelta(from: old, to: new)) }
    },
    2: {
        let (old, new) = uuidScenario(count: 100_000, deleted: 20_000..<30_000, insertAt: 30_000, shuffled: 2_000)
        measure("2. 100,000 UUIDs", runs: 21, target: 15, items: old.count + new.count) { describe(try! IndexDelta(from: old, to: new)) }
    },
    3: {
        let (old, new) = uuidScenario(count: 1_000_000, deleted: 200_000..<300_000, insertAt: 300_000, shuffled: 20_000)
        measure("3. 1,000,000 UUIDs", runs: 7, target: 250, items: old.count + new.count) { describe(try! IndexDelta(from: old, to: new)) }
    },
    4: {
        let (old, new) = movieScenario()
        measure("4. 100,000 movies", runs: 21, target: 15, items: old.count + new.count) { describe(try! IndexDelta(from: old, to: new)) }
    },
    6: {
        let (old, new) = stringScenario()
        measure("6. 5,000 String UUIDs (1,000 deleted, 1,000 inserted, 200 swapped)", runs: 201, target: 0.45, items: old.count + new.count) {
            describe(try! IndexDelta(from: old, to: new))
        }
    },
    7: {
        // Issue #58's other case: one move, found among 10,000 String UUIDs.
        var rng = SplitMix(state: 7)
        let old = uuids(10_000, &rng).map { StringItem(uniqueID: $0.uniqueID.uuidString) }
        let new = [old[9_999]] + old[..<9_999]
        measure("7. the last of 10,000 String UUIDs moved to the front", runs: 101, target: 0.5, items: old.count + new.count) {
            describe(try! IndexDelta(from: old, to: new))
        }
    },
    5: {
        let (old, new) = sectionScenario()
        measure("5. 100,000 items in 100 sections", runs: 21, target: 30, items: 2 * old.reduce(0) { $0 + $1.items.count }) {
            let delta = try! SectionedDelta(from: old, to: new)
            return "sections: \(describe(delta.sectionDelta)); items: deletions \(delta.itemDelta.deletions.count), "
                + "insertions \(delta.itemDelta.insertions.count), moves \(delta.itemDelta.moves.count), "
                + "reloads \(delta.itemDelta.reloads.count)"
        }
    },
]

let chosen = CommandLine.arguments.dropFirst().compactMap { Int($0) }
for number in chosen.isEmpty ? scenarios.keys.sorted() : chosen {
    guard let run = scenarios[number] else {
        print("no scenario \(number); choose 1 to 7")
        exit(2)
    }
    run()
}
