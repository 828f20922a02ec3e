import LiveCollections
import PropertyBased
import TestSupport
import Testing

func flattened(_ replayed: [ReplayedSection<Shelf, Thing>]) -> [Shelf] {
    replayed.map { Shelf(id: $0.section.id, header: $0.section.header, items: $0.items) }
}

@Suite struct SectionedDiffTests {
    @Test func replayingBothStagesGivesTheNewSectionsExactly() async throws {
        await propertyCheck(count: 400, input: Gens.shelves, Gens.shelves) { old, new in
            let delta = try SectionedDelta(from: old, to: new)
            #expect(flattened(try delta.replay(old: old, new: new)) == new)
            #expect(delta.itemDelta.moves.count == minimumItemMoves(old: old, new: new))
            #expect(delta.sectionDelta.moves.count == minimumMoves(old: old.map(\.id), new: new.map(\.id)))
            for reload in delta.sectionDelta.reloads {
                #expect(old[reload.source].header != new[reload.target].header)
            }
        }
    }

    @Test func itemReloadsAreExactlyTheChangedKeptItems() async throws {
        await propertyCheck(count: 300, input: Gens.shelves, Gens.shelves) { old, new in
            let delta = try SectionedDelta(from: old, to: new)
            let oldSectionIDs = Set(old.map(\.id))
            let newSectionIDs = Set(new.map(\.id))
            var oldItems = [Int: (section: Int, content: Int)]()
            for section in old { for item in section.items { oldItems[item.id] = (section.id, item.content) } }
            var expected = Set<Int>()
            for section in new where oldSectionIDs.contains(section.id) {
                for item in section.items {
                    if let was = oldItems[item.id], newSectionIDs.contains(was.section), was.content != item.content {
                        expected.insert(item.id)
                    }
                }
            }
            let reloaded = Set(delta.itemDelta.reloads.map { new[$0.target.section].items[$0.target.item].id })
            #expect(reloaded == expected)
            #expect(delta.itemDelta.reloads.count == expected.count)
        }
    }

    @Test func anItemMovesAcrossSectionsAsOneMove() throws {
        let old = [Shelf(id: 0, header: 0, items: [Thing(id: 1), Thing(id: 2)]), Shelf(id: 1, header: 0, items: [Thing(id: 3)])]
        let new = [Shelf(id: 0, header: 0, items: [Thing(id: 1)]), Shelf(id: 1, header: 0, items: [Thing(id: 2), Thing(id: 3)])]
        let delta = try SectionedDelta(from: old, to: new)
        #expect(delta.sectionDelta == IndexDelta())
        #expect(
            delta.itemDelta
                == IndexPathDelta(moves: [
                    ItemPathPair(source: ItemPath(section: 0, item: 1), target: ItemPath(section: 1, item: 0))
                ]))
    }

    @Test func pathsUseTheSectionOrderAfterTheSectionStage() throws {
        // Sections swap; an item is deleted from the section that moved to the front.
        let old = [Shelf(id: 0, header: 0, items: [Thing(id: 1)]), Shelf(id: 1, header: 0, items: [Thing(id: 2), Thing(id: 3)])]
        let new = [Shelf(id: 1, header: 5, items: [Thing(id: 3)]), Shelf(id: 0, header: 0, items: [Thing(id: 1)])]
        let delta = try SectionedDelta(from: old, to: new)
        #expect(delta.sectionDelta.moves.count == 1)
        #expect(delta.sectionDelta.reloads == [IndexPair(source: 1, target: 0)])
        #expect(delta.itemDelta == IndexPathDelta(deletions: [ItemPath(section: 0, item: 0)]))
        #expect(flattened(try delta.replay(old: old, new: new)) == new)
    }

    @Test func itemsLeaveWithDeletedSectionsAndArriveWithInsertedOnes() throws {
        let old = [Shelf(id: 0, header: 0, items: [Thing(id: 1), Thing(id: 2)]), Shelf(id: 1, header: 0, items: [Thing(id: 3)])]
        // Section 0 is deleted; its item 2 reappears in a new section 9; item 3 moves into it too.
        let new = [Shelf(id: 1, header: 0, items: [Thing(id: 1)]), Shelf(id: 9, header: 0, items: [Thing(id: 2), Thing(id: 3)])]
        let delta = try SectionedDelta(from: old, to: new)
        #expect(delta.sectionDelta.deletions == [0])
        #expect(delta.sectionDelta.insertions == [1])
        #expect(delta.itemDelta.insertions == [ItemPath(section: 0, item: 0)])
        #expect(delta.itemDelta.deletions == [ItemPath(section: 0, item: 0)])
        #expect(delta.itemDelta.moves.isEmpty)
        #expect(flattened(try delta.replay(old: old, new: new)) == new)
    }

    @Test func emptySectionsAreKept() throws {
        let old = [Shelf(id: 0, header: 0, items: []), Shelf(id: 1, header: 0, items: [Thing(id: 1)])]
        let new = [Shelf(id: 1, header: 0, items: []), Shelf(id: 2, header: 0, items: []), Shelf(id: 0, header: 0, items: [Thing(id: 1)])]
        let delta = try SectionedDelta(from: old, to: new)
        #expect(flattened(try delta.replay(old: old, new: new)) == new)
        #expect(delta.itemDelta.moves.count == 1)
    }

    @Test func anItemIDInTwoSectionsIsADuplicateNamedByPaths() throws {
        let old = [Shelf(id: 0, header: 0, items: [Thing(id: 1)]), Shelf(id: 1, header: 0, items: [Thing(id: 2), Thing(id: 1)])]
        let error = try #require(throws: DuplicateIdentifierError.self) { try SectionedDelta(from: old, to: []) }
        #expect(error.id as? Int == 1 && error.level == .item && error.collection == .old)
        #expect(error.firstPosition == .path(ItemPath(section: 0, item: 0)))
        #expect(error.secondPosition == .path(ItemPath(section: 1, item: 1)))
    }

    @Test func aSectionIDTwiceIsADuplicateSection() throws {
        let new = [Shelf(id: 4, header: 0, items: []), Shelf(id: 4, header: 1, items: [])]
        let error = try #require(throws: DuplicateIdentifierError.self) { try SectionedDelta(from: [], to: new) }
        #expect(error.level == .section && error.collection == .new)
        #expect(error.firstPosition == .index(0) && error.secondPosition == .index(1))
    }
}
