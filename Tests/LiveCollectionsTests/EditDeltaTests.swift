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

@Suite struct SectionedEditDeltaTests {
    /// Untouched sections kept as they were, in their order but with the others among them
    /// anywhere; touched ones kept (their headers sometimes changed), removed, or joined by new
    /// ones, their items dropped, changed, joined by new ones and dealt out among them: the delta
    /// from the touched sections alone is the whole diff's, moves counted, and replays.
    @Test func theDeltaOfTheTouchedSectionsIsTheDiffs() async throws {
        await propertyCheck(count: 500, input: Gens.shelves, Gen.int(in: 0...9).array(of: 1...40)) { old, choices in
            var drawn = 0
            func choice() -> Int {
                defer { drawn += 1 }
                return choices[drawn % choices.count]
            }
            let touchedOld = old.indices.filter { _ in choice() < 5 }
            let untouched = old.indices.filter { !touchedOld.contains($0) }.map { old[$0] }
            var fresh = touchedOld.map { old[$0] }.filter { _ in choice() != 0 }
            fresh = fresh.map { section in Shelf(id: section.id, header: section.header + (choice() == 1 ? 1 : 0), items: []) }
            fresh += (0..<choice() % 3).map { Shelf(id: 20 + $0, header: 0, items: []) }
            var pool = touchedOld.flatMap { old[$0].items }.filter { _ in choice() != 0 }
            pool = pool.map { choice() == 1 ? Thing(id: $0.id, content: $0.content + 1) : $0 }
            pool += (0..<choice()).map { Thing(id: 100 + $0) }
            pool = pool.shuffledDeterministically(by: choices)
            if !fresh.isEmpty {
                for item in pool { fresh[choice() % fresh.count].items.append(item) }
            }
            // The untouched in order, each touched one put in at a drawn place.
            var new = untouched
            var touchedIDs = Set<Int>()
            for section in fresh.shuffledDeterministically(by: choices.reversed()) {
                new.insert(section, at: choice() % (new.count + 1))
                touchedIDs.insert(section.id)
            }
            let touchedNew = new.indices.filter { touchedIDs.contains(new[$0].id) }
            let policy = AnimationPolicy()
            let expected = try policy.animatedDelta(from: old, to: new)
            let delta = try #require(try policy.animatedDelta(from: old, to: new, touchedOld: touchedOld, touchedNew: touchedNew))
            #expect(delta.sectionAnimation == expected.sectionAnimation)
            #expect(delta.itemAnimation == expected.itemAnimation)
            #expect(delta.sectionDelta == expected.sectionDelta)
            #expect(delta.deletedItemPaths == expected.deletedItemPaths)
            let items = try #require(delta.itemDelta)
            let whole = try #require(expected.itemDelta)
            #expect(items.deletions == whole.deletions)
            #expect(items.insertions == whole.insertions)
            #expect(items.reloads == whole.reloads)
            #expect(items.moves.count == whole.moves.count)
            let replayed = try SectionedDelta(sectionDelta: delta.sectionDelta ?? IndexDelta(), itemDelta: items).replay(old: old, new: new)
            #expect(flattened(replayed) == new)
        }
    }

    @Test func aKeptSectionTouchedOnOneSideOnlyIsLeftToTheDiff() throws {
        let old = (0..<3).map { section in Shelf(id: section, header: 0, items: [Thing(id: section)]) }
        #expect(try AnimationPolicy().animatedDelta(from: old, to: old, touchedOld: [1], touchedNew: []) == nil)
        #expect(try AnimationPolicy().animatedDelta(from: old, to: old, touchedOld: [], touchedNew: [2]) == nil)
    }

    @Test func theThresholdsCountTheWholeCollection() throws {
        let old = (0..<3).map { section in Shelf(id: section, header: 0, items: (0..<2).map { Thing(id: section * 10 + $0) }) }
        var new = old
        new[1].items.reverse()
        let policy = AnimationPolicy(dataCountAnimationThreshold: 5)
        let delta = try policy.animatedDelta(from: old, to: new, touchedOld: [1], touchedNew: [1])
        #expect(delta == (try policy.animatedDelta(from: old, to: new)))
        #expect(delta?.itemDelta == nil)
    }
}
