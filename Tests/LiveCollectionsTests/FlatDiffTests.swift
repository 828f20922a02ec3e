import LiveCollections
import PropertyBased
import TestSupport
import Testing

@Suite struct FlatDiffTests {
    @Test func replayingTheDeltaGivesTheNewDataWithMinimalMovesAndExactReloads() async throws {
        await propertyCheck(count: 400, input: Gens.flatCase) { flat in
            let delta = try IndexDelta(from: flat.old, to: flat.new)
            #expect(try delta.replay(old: flat.old, new: flat.new) == flat.new)
            for reload in delta.reloads {
                #expect(flat.old[reload.source].id == flat.new[reload.target].id)
                #expect(flat.old[reload.source].content != flat.new[reload.target].content)
            }
            #expect(delta.moves.count == minimumMoves(old: flat.old.map(\.id), new: flat.new.map(\.id)))
            let kept = Set(flat.old.map(\.id)).intersection(flat.new.map(\.id))
            #expect(delta.deletions.count == flat.old.count - kept.count)
            #expect(delta.insertions.count == flat.new.count - kept.count)
        }
    }

    @Test func identicalCollectionsHaveNoChanges() async throws {
        await propertyCheck(input: Gens.flatCase) { flat in
            let delta = try IndexDelta(from: flat.new, to: flat.new)
            #expect(!delta.hasChanges)
            #expect(delta.changeCount == 0)
        }
    }

    @Test func movingTheLastOfTenThousandToTheFrontIsOneMove() throws {
        let old = (0..<10_000).map { Thing(id: $0) }
        let new = [old[9_999]] + old[..<9_999]
        let delta = try IndexDelta(from: old, to: new)
        #expect(delta == IndexDelta(moves: [IndexPair(source: 9_999, target: 0)]))
    }

    @Test func movingTheFirstToTheBackIsOneMove() throws {
        let old = (0..<10_000).map { Thing(id: $0) }
        let delta = try IndexDelta(from: old, to: Array(old[1...]) + [old[0]])
        #expect(delta == IndexDelta(moves: [IndexPair(source: 0, target: 9_999)]))
    }

    @Test func reversingTenThousandIsNineThousandNineHundredNinetyNineMoves() throws {
        let old = (0..<10_000).map { Thing(id: $0) }
        let new = Array(old.reversed())
        let delta = try IndexDelta(from: old, to: new)
        #expect(delta.moves.count == 9_999)
        #expect(delta.deletions.isEmpty && delta.insertions.isEmpty && delta.reloads.isEmpty)
        #expect(try delta.replay(old: old, new: new) == new)
    }

    @Test func mixedChangeHasTheExpectedIndices() throws {
        let old = [Thing(id: 1), Thing(id: 2), Thing(id: 3), Thing(id: 4)]
        let new = [Thing(id: 3), Thing(id: 5), Thing(id: 1, content: 7), Thing(id: 4)]
        let delta = try IndexDelta(from: old, to: new)
        #expect(delta.deletions == [1])
        #expect(delta.insertions == [1])
        // 1 and 3 swap order; either could move, and the engine keeps the run ending latest.
        #expect(delta.moves == [IndexPair(source: 0, target: 2)])
        #expect(delta.reloads == [IndexPair(source: 0, target: 2)])
        #expect(delta.changeCount == 4)
    }

    @Test func aDuplicatedIDInTheOldCollectionNamesTheIDAndBothPositions() throws {
        let error = try #require(throws: DuplicateIdentifierError.self) {
            try IndexDelta(from: [Thing(id: 7), Thing(id: 8), Thing(id: 7)], to: [Thing(id: 1)])
        }
        #expect(error.id as? Int == 7)
        #expect(error.collection == .old)
        #expect(error.level == .item)
        #expect(error.firstPosition == .index(0))
        #expect(error.secondPosition == .index(2))
        #expect(error.description == "duplicate item id 7 in the old collection at 0 and 2")
    }

    @Test func aDuplicatedIDInTheNewCollectionIsFoundWhetherOrNotItWasOld() throws {
        let kept = try #require(throws: DuplicateIdentifierError.self) {
            try IndexDelta(from: [Thing(id: 1)], to: [Thing(id: 2), Thing(id: 1), Thing(id: 1)])
        }
        #expect(kept.collection == .new && kept.firstPosition == .index(1) && kept.secondPosition == .index(2))
        let fresh = try #require(throws: DuplicateIdentifierError.self) {
            try IndexDelta(from: [Thing(id: 1)], to: [Thing(id: 5), Thing(id: 2), Thing(id: 5)])
        }
        #expect(fresh.id as? Int == 5 && fresh.firstPosition == .index(0) && fresh.secondPosition == .index(2))
    }

    @Test func aCustomIdentityHashIsUsedAndCollisionsStayExact() async throws {
        struct Constant: UniquelyIdentifiable {
            var uniqueID: Int
            var content = 0
            var identityHash: Int { 7 }
        }
        await propertyCheck(count: 100, input: Gens.flatCase) { flat in
            let old = flat.old.map { Constant(uniqueID: $0.id, content: $0.content) }
            let new = flat.new.map { Constant(uniqueID: $0.id, content: $0.content) }
            let custom = try IndexDelta(from: old, to: new), standard = try IndexDelta(from: flat.old, to: flat.new)
            #expect(custom == standard)
        }
    }

    @Test func idsThatCollideInHashButDifferAreDistinct() throws {
        struct Colliding: Hashable, Sendable {
            var value: Int
            func hash(into hasher: inout Hasher) { hasher.combine(0) }
        }
        struct Item: UniquelyIdentifiable {
            var uniqueID: Colliding
        }
        let old = (0..<50).map { Item(uniqueID: Colliding(value: $0)) }
        let new = old.reversed() + [Item(uniqueID: Colliding(value: 99))]
        let delta = try IndexDelta(from: old, to: new)
        #expect(delta.moves.count == 49)
        #expect(delta.insertions == [50])
        #expect(try delta.replay(old: old, new: new) == new)
    }
}
