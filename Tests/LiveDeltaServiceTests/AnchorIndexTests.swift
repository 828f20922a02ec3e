import LiveCollections
import PropertyBased
import TestSupport
import Testing

@testable import LiveDeltaService

/// A keyset window's anchor is found where it is, whether the list is scanned or has a table,
/// and whatever a table kept for the list's storage says after the list changed in place.
@Suite struct AnchorIndexTests {
    @Test func everyAnchorIsFoundWhereItIsThroughTablesLeftStale() async {
        await propertyCheck(
            count: 30, input: Gen.int(in: AnchorIndex.shortest...AnchorIndex.shortest + 2_000), Gen.int(in: 0...1_000_000).array(of: 1...40)
        ) { count, picks in
            var items = (0..<count).map { Thing(id: $0 * 7) }
            let probes = picks.map { Thing(id: ($0 % count) * 7) }
            func check(_ probe: Thing) {
                #expect(AnchorIndex.position(of: probe, in: items) == items.firstIndex { $0.id == probe.id })
            }
            // Scanned, then asked often enough to be given a table.
            for _ in 0...AnchorIndex.scansBeforeTable + 1 { probes.forEach(check) }
            // Changed in place: the same storage and length, so the table kept for it is found
            // again, and says wrong things of every row moved or replaced.
            let storage = items.withUnsafeBufferPointer { $0.baseAddress }
            for pick in picks { items.swapAt(pick % count, (pick / 7) % count) }
            items[picks[0] % count] = Thing(id: -1)
            #expect(items.withUnsafeBufferPointer { $0.baseAddress } == storage)
            for _ in 0...AnchorIndex.scansBeforeTable + 1 {
                probes.forEach(check)
                check(Thing(id: -1))
                check(Thing(id: 3))  // never there: ids are multiples of 7
            }
        }
    }

    /// Callers that ask about one list together, once it is due for a table, wait for the one
    /// table the first of them builds, and all find their anchors through it.
    @Test func callersAskingTogetherShareOneTable() async {
        let tables = AnchorTables()
        let items = (0..<50_000).map { Thing(id: $0 * 7) }
        // Scanned until the next question builds the table.
        for _ in 0..<AnchorIndex.scansBeforeTable { #expect(tables.position(of: Thing(id: 7), in: items) == 1) }
        let found = await withTaskGroup(of: [Int?].self) { group in
            for caller in 0..<16 {
                group.addTask { (0..<200).map { tables.position(of: Thing(id: (caller * 977 + $0 * 13) % 50_000 * 7), in: items) } }
            }
            return await group.reduce(into: []) { $0.append(contentsOf: $1) }
        }
        #expect(found.count == 16 * 200)
        #expect(found.allSatisfy { $0 != nil })
        #expect(tables.built == 1)
        // Every caller's answer is the anchor's row.
        for caller in 0..<16 {
            for probe in 0..<200 {
                let row = (caller * 977 + probe * 13) % 50_000
                #expect(tables.position(of: Thing(id: row * 7), in: items) == row)
            }
        }
        #expect(tables.built == 1)
    }
}
