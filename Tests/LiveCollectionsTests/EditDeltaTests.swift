import LiveCollections
import PropertyBased
import TestSupport
import Testing

@Suite struct EditDeltaTests {
    /// Any change, with the untouched items an increasing chain of unchanged ones (each side's
    /// greedy pick, so sometimes far from the longest): the delta from the touched items alone
    /// is the diff's, moves counted.
    @Test func theDeltaOfTheTouchedItemsIsTheDiffs() async throws {
        await propertyCheck(count: 400, input: Gens.flatCase) { flat in
            let oldIndex = Dictionary(uniqueKeysWithValues: flat.old.enumerated().map { ($1.id, $0) })
            var untouched = Set<Int>()
            var last = -1
            for item in flat.new {
                if let old = oldIndex[item.id], old > last, flat.old[old].content == item.content {
                    untouched.insert(item.id)
                    last = old
                }
            }
            let newIndex = Dictionary(uniqueKeysWithValues: flat.new.enumerated().map { ($1.id, $0) })
            let ids = Set(flat.old.map(\.id)).union(flat.new.map(\.id)).subtracting(untouched)
            let touched = ids.map { id in
                TouchedItem(
                    old: oldIndex[id], new: newIndex[id],
                    changed: oldIndex[id].flatMap { old in newIndex[id].map { flat.old[old].content != flat.new[$0].content } } ?? false)
            }
            let expected = try IndexDelta(from: flat.old, to: flat.new)
            guard let delta = IndexDelta(oldCount: flat.old.count, newCount: flat.new.count, touched: touched) else {
                Issue.record("no delta for \(touched.count) touched items")
                return
            }
            #expect(delta.deletions == expected.deletions)
            #expect(delta.insertions == expected.insertions)
            #expect(delta.reloads == expected.reloads)
            #expect(delta.moves.count == expected.moves.count)
            #expect(try delta.replay(old: flat.old, new: flat.new) == flat.new)
        }
    }

    @Test func aBlockPushedPastOneItemMovesTheItem() throws {
        // Three touched items moved after an untouched one: one move, of the untouched item.
        let delta = try #require(
            IndexDelta(
                oldCount: 5, newCount: 5,
                touched: [
                    TouchedItem(old: 0, new: 1, changed: false), TouchedItem(old: 1, new: 2, changed: false),
                    TouchedItem(old: 2, new: 3, changed: false),
                ]))
        #expect(delta == IndexDelta(moves: [IndexPair(source: 3, target: 0)]))
    }

    @Test func tooManyTouchedItemsAreLeftToTheDiff() {
        let touched = (0..<10).map { TouchedItem(old: $0, new: 9 - $0, changed: false) }
        #expect(IndexDelta(oldCount: 10, newCount: 10, touched: touched, limit: 5) == nil)
    }
}
