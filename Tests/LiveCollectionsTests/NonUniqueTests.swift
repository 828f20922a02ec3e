import LiveCollections
import PropertyBased
import TestSupport
import Testing

@Suite struct NonUniqueTests {
    @Test func theSeedsExampleIsNumberedByOccurrence() {
        let ids = ["A", "B", "A", "C", "D", "B"]
        struct Letter: NonUniquelyIdentifiable { var nonUniqueID: String }
        let numbered = NonUniqueDatum.numbering(ids.map(Letter.init))
        #expect(numbered.map(\.uniqueID) == [("A", 1), ("B", 1), ("A", 2), ("C", 1), ("D", 1), ("B", 2)].map(OccurrenceID.init))
    }

    @Test func theKthOccurrenceMatchesTheKthOccurrence() throws {
        // [A, B, A, C, D, B] -> [B, A, C, A]: A1, B1, A2, C1 are kept; D1 and B2 are deleted.
        let old = NonUniqueDatum.numbering([0, 1, 0, 2, 3, 1].map { Dupe(id: $0) })
        let new = NonUniqueDatum.numbering([1, 0, 2, 0].map { Dupe(id: $0) })
        let delta = try IndexDelta(from: old, to: new)
        #expect(delta.deletions == [4, 5])
        #expect(delta.insertions.isEmpty)
        #expect(delta.moves.count == 2)
        #expect(try delta.replay(old: old, new: new).map(\.rawData) == new.map(\.rawData))
    }

    @Test func heavilyDuplicatedDataReplaysWithOccurrenceMatching() async throws {
        await propertyCheck(count: 300, input: Gens.dupes, Gens.dupes) { oldValues, newValues in
            let old = NonUniqueDatum.numbering(oldValues)
            let new = NonUniqueDatum.numbering(newValues)
            let delta = try IndexDelta(from: old, to: new)
            #expect(try delta.replay(old: old, new: new).map(\.rawData) == newValues)
            // Per id, min(old count, new count) occurrences are kept; the rest come and go.
            var oldCount = [Int: Int](), newCount = [Int: Int]()
            for value in oldValues { oldCount[value.id, default: 0] += 1 }
            for value in newValues { newCount[value.id, default: 0] += 1 }
            let expectedDeletions = oldCount.reduce(0) { $0 + max(0, $1.value - newCount[$1.key, default: 0]) }
            #expect(delta.deletions.count == expectedDeletions)
            for reload in delta.reloads { #expect(old[reload.source].rawData != new[reload.target].rawData) }
            #expect(delta.moves.count == minimumMoves(old: old.map { $0.uniqueID.hashValue }, new: new.map { $0.uniqueID.hashValue }))
        }
    }

    @Test func nonUniqueSectionsAreNumberedAcrossTheWholeCollection() async throws {
        await propertyCheck(count: 200, input: Gens.dupes, Gens.dupes) { oldValues, newValues in
            func sections(_ values: [Dupe]) -> [ItemSection<Int, Int, NonUniqueDatum<Dupe>>] {
                let chunks = stride(from: 0, to: values.count, by: 4).map { Array(values[$0..<min($0 + 4, values.count)]) }
                return zip(chunks.indices, NonUniqueDatum.numbering(sections: chunks)).map {
                    ItemSection(id: $0, header: 0, items: $1)
                }
            }
            let old = sections(oldValues), new = sections(newValues)
            let replayed = try SectionedDelta(from: old, to: new).replay(old: old, new: new)
            #expect(replayed.flatMap { $0.items.map(\.rawData) } == newValues)
        }
    }

    @Test func aNonUniqueHolderTakesPlainValues() throws {
        let data = NonUniqueCollectionData<Dupe>(nonUnique: [Dupe(id: 1), Dupe(id: 1)])
        let update = try data.update(raw: [Dupe(id: 1), Dupe(id: 2), Dupe(id: 1, content: 3)])
        #expect(update.delta == IndexDelta(insertions: [1], reloads: [IndexPair(source: 1, target: 2)]))
        #expect(data[2].rawData == Dupe(id: 1, content: 3))
        #expect(data[2].occurrence == 2)
    }
}
