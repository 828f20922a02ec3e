// Times the request path in process: the JSON reader on a 100,000-object document (beside
// Foundation's JSONSerialization; validation alone also on prose), whole /diff bodies of 20 and 10,000 items, and each delta
// format against batch on 100,000 items with 10% changed.
// Usage: ServiceBenchmark [reader|diff|formats]...   (all when none is given); for profiling,
// validate-loop, scan-loop, plain-loop, item-loop and read-loop repeat one part of the reader
// 200 times (LOOPS=n for another count, as under callgrind): checking, one hashed scan of the
// whole array, a hashed scan of each item in turn, the same finding each item's id with keys
// remembered, and the whole reader with its records. small, large and tiny repeat one /diff
// body (tiny 500,001 times, or RUNS=n).
import ByteJSON
import Foundation
import LiveDeltaService
import MicroHTTP

func movie(_ id: Int, edited: Bool = false) -> String {
    let tags = id % 3 == 0 ? "[\"comedy\"]" : "[\"drama\",\"new\"]"
    return
        "{\"id\":\(id),\"title\":\"Movie number \(id)\(edited ? " (edited)" : "")\",\"year\":\(1950 + id % 70),\"rating\":\(Double(id % 100) / 10),\"tags\":\(tags)}"
}

/// old: `count` movies; new: 5% deleted, 5% inserted, 5% edited, the first tenth shuffled.
func diffBody(count: Int) -> [UInt8] {
    var rng = SystemRandomNumberGenerator()
    let old = (0..<count).map { movie($0) }
    var newIDs = Array(0..<count)
    newIDs[0..<count / 10].shuffle(using: &rng)
    newIDs.removeSubrange(count / 3..<(count / 3 + count / 20))
    newIDs.insert(contentsOf: (0..<count / 20).map { 10 * count + $0 }, at: count / 2)
    let edited = Set((0..<count).shuffled(using: &rng).prefix(count / 20))
    let new = newIDs.map { movie($0, edited: edited.contains($0)) }
    return Array("{\"old\":[\(old.joined(separator: ","))],\"new\":[\(new.joined(separator: ","))]}".utf8)
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
}

func measure(_ runs: Int, _ body: () throws -> Void) rethrows -> (median: Double, min: Double) {
    var times = [Double]()
    for _ in 0..<runs {
        let start = ContinuousClock.now
        try body()
        times.append(milliseconds(ContinuousClock.now - start))
    }
    times.sort()
    return (times[times.count / 2], times[0])
}

func reader() throws {
    let document = Array(("[" + (0..<100_000).map { movie($0) }.joined(separator: ",") + "]").utf8)
    let body = ByteBuffer(document)
    let megabytes = Double(document.count) / 1_048_576
    let ours = try measure(15) {
        let collection = try CollectionDocument.read(body)
        precondition(collection.itemCount == 100_000)
    }
    let validateOnly = try measure(15) { try document.withUnsafeBufferPointer { try JSONScanner.validate($0) } }
    let hashedScan = try measure(15) {
        try document.withUnsafeBufferPointer { bytes in
            var scanner = JSONScanner(bytes)
            _ = try scanner.scanDocument()
        }
    }
    let data = Data(document)
    let foundation =
        CommandLine.arguments.contains("--no-foundation")
        ? (median: Double.nan, min: Double.nan) : try measure(5) { _ = try JSONSerialization.jsonObject(with: data) }
    func rate(_ ms: Double) -> Double { megabytes / (ms / 1000) }
    func verdict(_ met: Bool) -> String { met ? "met" : "MISSED" }
    print(
        String(
            format:
                "JSON reader, 100,000 movies (%.1f MB): ids and content hashes: median %.2f ms (%.0f MB/s), min %.2f ms (target >= 1,000 MB/s: %@)",
            megabytes, ours.median, rate(ours.median), ours.min, verdict(rate(ours.median) >= 1_000)))
    print(
        String(
            format: "  validation alone: median %.2f ms (%.0f MB/s; target >= 2,000 MB/s: %@); one scan with hashes: median %.2f ms (%.0f MB/s)",
            validateOnly.median, rate(validateOnly.median), verdict(rate(validateOnly.median) >= 2_000), hashedScan.median, rate(hashedScan.median)))
    print(String(format: "  JSONSerialization: median %.2f ms (%.0f MB/s)", foundation.median, rate(foundation.median)))
    // The same movies keyed by UUID strings, as many apps key their rows.
    let keyed = Array(
        ("["
            + (0..<100_000).map { movie($0).replacingOccurrences(of: "{\"id\":\($0),", with: "{\"id\":\"\(UUID().uuidString)\",") }
            .joined(separator: ",") + "]").utf8)
    let keyedBody = ByteBuffer(keyed)
    let uuids = try measure(15) {
        let collection = try CollectionDocument.read(keyedBody)
        precondition(collection.itemCount == 100_000)
    }
    print(
        String(
            format: "  with UUID string ids (%.1f MB): median %.2f ms (%.0f MB/s)",
            Double(keyed.count) / 1_048_576, uuids.median, Double(keyed.count) / 1_048_576 / (uuids.median / 1000)))
    // Validation where strings are long and their lengths vary (a sentence or two of prose).
    var rng = SystemRandomNumberGenerator()
    let words = ["the", "quiet", "river", "ran", "past", "an", "old", "mill", "where", "children", "played", "all", "summer", "long"]
    let prose = Array(
        ("["
            + (0..<20_000).map { id in
                let sentence = (0..<Int.random(in: 10...60, using: &rng)).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")
                return "{\"id\":\(id),\"text\":\"\(sentence).\"}"
            }.joined(separator: ",") + "]").utf8)
    let prosed = try measure(15) { try prose.withUnsafeBufferPointer { try JSONScanner.validate($0) } }
    print(
        String(
            format: "  validation of 20,000 items of prose (%.1f MB): median %.2f ms (%.0f MB/s)",
            Double(prose.count) / 1_048_576, prosed.median, Double(prose.count) / 1_048_576 / (prosed.median / 1000)))
}

func diff(sizes: [(Int, Int)] = [(20, 2_001), (10_000, 41)]) throws {
    for (count, runs) in sizes {
        let bytes = diffBody(count: count)
        let body = ByteBuffer(bytes)
        var response = [UInt8]()
        let time = try measure(runs) { response = try DiffEndpoint.respond(to: body) }
        print(
            String(
                format: "POST /diff body, %d items a side (%d bytes): median %.3f ms, min %.3f ms, response %d bytes",
                count, bytes.count, time.median, time.min, response.count))
    }
}

/// 100,000 movies, 10% changed: 2.5% deleted, 2.5% inserted, 2.5% edited, 2.5% moved.
func formats() throws {
    let count = 100_000
    var rng = SystemRandomNumberGenerator()
    let old = (0..<count).map { movie($0) }
    var ids = Array(0..<count)
    let moved = Array(ids.shuffled(using: &rng).prefix(count / 40))
    let movedSet = Set(moved)
    ids.removeAll { movedSet.contains($0) }
    for id in moved { ids.insert(id, at: Int.random(in: 0...ids.count, using: &rng)) }
    let deleted = Set(ids.shuffled(using: &rng).prefix(count / 40))
    ids.removeAll { deleted.contains($0) }
    for k in 0..<count / 40 { ids.insert(10 * count + k, at: Int.random(in: 0...ids.count, using: &rng)) }
    let edited = Set(ids.shuffled(using: &rng).prefix(count / 40))
    let new = ids.map { movie($0, edited: edited.contains($0)) }
    var timings: [(String, Double)] = []
    for format in ["batch", "sequential", "jsonPatch", "keyed"] {
        let options = "{\"format\":\"\(format)\",\"dataCountAnimationThreshold\":1000000,\"deltaCountAnimationThreshold\":1000000}"
        let body = ByteBuffer(Array("{\"old\":[\(old.joined(separator: ","))],\"new\":[\(new.joined(separator: ","))],\"options\":\(options)}".utf8))
        var response = [UInt8]()
        let time = try measure(21) { response = try DiffEndpoint.respond(to: body) }
        timings.append((format, time.median))
        let ratio = time.median / timings[0].1
        print(
            String(
                format: "format %@, 100,000 movies, 10%% changed: median %.2f ms, min %.2f ms, answer %d bytes; %.2fx batch (target <= 1.5x)",
                format, time.median, time.min, response.count, ratio))
    }
}

let chosen = CommandLine.arguments.dropFirst()
if chosen.isEmpty || chosen.contains("reader") { try reader() }
if chosen.isEmpty || chosen.contains("diff") { try diff() }
if chosen.isEmpty || chosen.contains("formats") { try formats() }
// For profiling the reader's parts alone.
if let mode = chosen.first(where: { ["validate-loop", "scan-loop", "plain-loop", "item-loop", "read-loop"].contains($0) }) {
    let document = Array(("[" + (0..<100_000).map { movie($0) }.joined(separator: ",") + "]").utf8)
    let body = ByteBuffer(document)
    let idName = JSONName("id")
    for _ in 0..<(ProcessInfo.processInfo.environment["LOOPS"].flatMap { Int($0) } ?? 200) {
        if mode == "read-loop" {
            _ = try CollectionDocument.read(body)
            continue
        }
        try document.withUnsafeBufferPointer { bytes in
            var scanner = JSONScanner(bytes)
            switch mode {
            case "validate-loop": try JSONScanner.validate(bytes)
            case "scan-loop": _ = try scanner.scanDocument()
            default:
                // Item by item, as the reader walks; the sum keeps the work from being dropped.
                var shapes = KeyShapes()
                var sum: UInt64 = 0
                var more = try scanner.beginArray()
                while more {
                    if mode == "item-loop" {
                        let (value, member, _) = try scanner.scanValue(findingMember: idName, keyShapes: &shapes)
                        sum &+= value.hash &+ UInt64(member?.start ?? 0)
                    } else {
                        sum &+= try scanner.scanValue().hash
                    }
                    more = try scanner.nextElement()
                }
                precondition(sum != 1)
            }
        }
    }
}
// For profiling the small request alone.
if chosen.contains("small") { try diff(sizes: [(20, 200_001)]) }
if chosen.contains("large") { try diff(sizes: [(10_000, 1_001)]) }
if chosen.contains("tiny") {
    // The load benchmark's 29-byte body: what a request costs with almost nothing to read.
    let body = ByteBuffer(Array(#"{"old":[1,2,3],"new":[3,2,1]}"#.utf8))
    let time = try measure(ProcessInfo.processInfo.environment["RUNS"].flatMap { Int($0) } ?? 500_001) { _ = try DiffEndpoint.respond(to: body) }
    print(String(format: "POST /diff, 29-byte body: median %.4f ms, min %.4f ms", time.median, time.min))
}
