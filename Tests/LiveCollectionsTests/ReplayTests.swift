import LiveCollections
import TestSupport
import Testing

/// The replay must refuse deltas that break the contract, or the property tests prove nothing.
@Suite struct ReplayTests {
    let old = [1, 2, 3]
    let new = [3, 1, 2]

    @Test func aCorrectDeltaReplays() throws {
        #expect(try IndexDelta(moves: [IndexPair(source: 2, target: 0)]).replay(old: old, new: new) == new)
    }

    @Test(arguments: [
        IndexDelta(deletions: [3], insertions: [0]),
        IndexDelta(deletions: [1, 0], insertions: [0, 1]),
        IndexDelta(insertions: [0]),
        IndexDelta(moves: [IndexPair(source: 2, target: 0), IndexPair(source: 1, target: 0)]),
        IndexDelta(deletions: [2], insertions: [0], moves: [IndexPair(source: 2, target: 1)]),
        IndexDelta(insertions: [0], moves: [IndexPair(source: 2, target: 0)]),
        IndexDelta(reloads: [IndexPair(source: 0, target: 1)]),
    ])
    func brokenDeltasAreRefused(delta: IndexDelta) {
        #expect(throws: ReplayError.self) { try delta.replay(old: old, new: new) }
    }

    @Test func aReloadTakesTheNewElementWhereTheOldOneLanded() throws {
        let delta = IndexDelta(moves: [IndexPair(source: 2, target: 0)], reloads: [IndexPair(source: 0, target: 1)])
        #expect(try delta.replay(old: [1, 2, 3], new: [30, 10, 20]) == [3, 10, 2])
    }

    @Test func anItemStageThatTouchesAnInsertedSectionIsRefused() throws {
        let old = [Shelf(id: 0, header: 0, items: [Thing(id: 1)])]
        let new = [Shelf(id: 9, header: 0, items: [Thing(id: 2)]), Shelf(id: 0, header: 0, items: [Thing(id: 1)])]
        let delta = SectionedDelta(
            sectionDelta: IndexDelta(insertions: [0]),
            itemDelta: IndexPathDelta(insertions: [ItemPath(section: 0, item: 0)]))
        #expect(throws: ReplayError.self) { try delta.replay(old: old, new: new) }
        #expect(try SectionedDelta(sectionDelta: IndexDelta(insertions: [0])).replay(old: old, new: new).count == 2)
    }
}
