import Dispatch
import LiveCollections
import PropertyBased
import TestSupport
import Testing

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// Content equality that ignores `content`: one raw type, another equality.
struct IDOnly: UniquelyIdentifiable, Sendable {
    var rawData: Thing
    var uniqueID: Int { rawData.id }
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawData.id == rhs.rawData.id }
}

struct IDOnlyFactory: UniquelyIdentifiableDataFactory, Sendable {
    func buildUniquelyIdentifiableDatum(_ rawType: Thing) -> IDOnly { IDOnly(rawData: rawType) }
}

@Suite struct CollectionDataTests {
    @Test func updateAnswersTheDeltaTheDeletedItemsAndTheNextVersion() throws {
        let data = try CollectionData([Thing(id: 1), Thing(id: 2), Thing(id: 3)])
        #expect(data.version == 0 && data.count == 3 && !data.isEmpty)
        let update = try data.update([Thing(id: 3), Thing(id: 1, content: 9)])
        #expect(
            update.delta
                == IndexDelta(
                    deletions: [1], moves: [IndexPair(source: 0, target: 1)],
                    reloads: [IndexPair(source: 0, target: 1)]))
        #expect(update.deletedItems == [Thing(id: 2)])
        #expect(update.baseVersion == 0 && update.version == 1)
        #expect(data.items == [Thing(id: 3), Thing(id: 1, content: 9)])
        #expect(data[1] == Thing(id: 1, content: 9))
        #expect(data.version == 1)
    }

    /// An append checks the appended ids against a table of their own, not one of the whole
    /// collection; it must refuse exactly what the combined collection would be refused for.
    @Test func anAppendRefusesTheRepeatTheCombinedCollectionWouldShow() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...40).array(of: 0...30), Gen.int(in: 0...60).array(of: 0...12)) { old, new in
            let distinct = old.reduce(into: [Int]()) { if !$0.contains($1) { $0.append($1) } }
            guard let data = try? CollectionData(distinct.map { Thing(id: $0) }) else { return }
            let combined: DuplicateIdentifierError?
            do throws(DuplicateIdentifierError) {
                _ = try CollectionData((distinct + new).map { Thing(id: $0) })
                combined = nil
            } catch {
                combined = error
            }
            do throws(CollectionDataError) {
                _ = try data.append(new.map { Thing(id: $0) })
                #expect(combined == nil)
                #expect(data.items.map(\.id) == distinct + new)
            } catch .duplicateIdentifier(let error) {
                #expect(error.firstPosition == combined?.firstPosition && error.secondPosition == combined?.secondPosition)
                #expect(error.collection == combined?.collection && "\(error.id)" == combined.map { "\($0.id)" })
                #expect(data.items.map(\.id) == distinct && data.version == 0)
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func calculateDeltaCommitsNothing() throws {
        let data = try CollectionData([Thing(id: 1)])
        let dryRun = try data.calculateDelta([Thing(id: 2)])
        #expect(dryRun.delta == IndexDelta(deletions: [0], insertions: [0]))
        #expect(dryRun.baseVersion == 0 && dryRun.version == 0)
        #expect(data.items == [Thing(id: 1)] && data.version == 0)
    }

    @Test func appendInsertsAtTheEndPreciselyWhateverTheThresholds() throws {
        let data = try CollectionData([Thing(id: 1)], policy: AnimationPolicy(dataCountAnimationThreshold: 1, deltaCountAnimationThreshold: 1))
        let update = try data.append([Thing(id: 2), Thing(id: 3)])
        #expect(update.animation == .preciseAnimations)
        #expect(update.delta == IndexDelta(insertions: [1, 2]))
        #expect(data.items.map(\.id) == [1, 2, 3] && data.version == 1)
    }

    @Test func aRejectedUpdateLeavesTheDataAsItWas() throws {
        let data = try CollectionData([Thing(id: 1)])
        #expect(throws: CollectionDataError.self) { try data.update([Thing(id: 2), Thing(id: 2)]) }
        #expect(throws: CollectionDataError.self) { try data.append([Thing(id: 1)]) }
        #expect(data.items == [Thing(id: 1)] && data.version == 0)
    }

    @Test func ifVersionRefusesAStaleBase() throws {
        let data = try CollectionData([Thing(id: 1)])
        try data.update([Thing(id: 2)], ifVersion: 0)
        do {
            try data.update([Thing(id: 3)], ifVersion: 0)
            Issue.record("a stale version was accepted")
        } catch {
            guard case .versionMismatch(expected: 0, current: 1) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
        }
        #expect(data.items == [Thing(id: 2)] && data.version == 1)
    }

    @Test func aDataFactoryChangesWhatCountsAsAReload() throws {
        let data = try CollectionData(dataFactory: IDOnlyFactory(), rawData: [Thing(id: 1, content: 1)])
        let update = try data.update(raw: [Thing(id: 1, content: 2)])
        #expect(update.delta == IndexDelta())
        #expect(data[0].rawData == Thing(id: 1, content: 2))
    }

    @Test func aDuplicatedInitialCollectionIsRejected() {
        #expect(throws: DuplicateIdentifierError.self) { try CollectionData([Thing(id: 1), Thing(id: 1)]) }
    }

    @Test func sectionDataCountsAndAddressesRows() throws {
        let data = try CollectionSectionData([
            Shelf(id: 0, header: 0, items: [Thing(id: 1), Thing(id: 2)]), Shelf(id: 1, header: 0, items: []),
        ])
        #expect(data.sectionCount == 2 && data.count == 2 && !data.isEmpty)
        #expect(data.rowCount(forSection: 0) == 2 && data.rowCount(forSection: 1) == 0)
        #expect(data[ItemPath(section: 0, item: 1)] == Thing(id: 2))
        let update = try data.update([Shelf(id: 1, header: 0, items: [Thing(id: 2)])])
        #expect(update.sectionDelta == IndexDelta(deletions: [0]))
        #expect(update.itemDelta == IndexPathDelta(insertions: [ItemPath(section: 0, item: 0)]))
        #expect(update.deletedItems == [Thing(id: 1), Thing(id: 2)].filter { $0.id == 1 })
        let appended = try data.append([Shelf(id: 5, header: 0, items: [Thing(id: 9)])])
        #expect(appended.sectionDelta == IndexDelta(insertions: [1]) && appended.version == 2)
        #expect(throws: CollectionDataError.self) { try data.append([Shelf(id: 6, header: 0, items: [Thing(id: 9)])]) }
        #expect(data.sectionCount == 2 && data.version == 2)
    }

    @Test func concurrentUpdatesChainFromTheFirstStateToTheLast() throws {
        struct Step: Sendable {
            var items: [Thing]
            var update: CollectionUpdate<Thing>
        }
        let first = (0..<50).map { Thing(id: $0) }
        let data = try CollectionData(first)
        let steps = NIOLockedValueBox<[Step]>([])
        let workers = 8, perWorker = 50
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var rng = SystemRandomNumberGenerator()
            for _ in 0..<perWorker {
                let items = (0..<60).filter { _ in Bool.random(using: &rng) }.shuffled(using: &rng)
                    .map { Thing(id: $0, content: worker) }
                let update = try! data.update(items)
                steps.withLockedValue { $0.append(Step(items: items, update: update)) }
            }
        }
        let ordered = steps.withLockedValue { $0 }.sorted { $0.update.version < $1.update.version }
        #expect(ordered.map(\.update.version) == Array(1...UInt64(workers * perWorker)))
        var state = first
        for step in ordered {
            #expect(step.update.baseVersion == step.update.version - 1)
            let delta = try #require(step.update.delta)
            state = try delta.replay(old: state, new: step.items)
            #expect(state == step.items)
        }
        #expect(state == data.items)
    }
}

@Suite struct VersionedReadTests {
    @Test func itemsAndVersionAreReadTogether() throws {
        let data = try CollectionData([Thing(id: 1)])
        try data.update([Thing(id: 2)])
        #expect(data.versionedItems.items == [Thing(id: 2)] && data.versionedItems.version == 1)
        let sections = try CollectionSectionData([Shelf(id: 1, header: 0, items: [])])
        try sections.append([Shelf(id: 2, header: 0, items: [])])
        #expect(sections.versionedSections.sections.map(\.id) == [1, 2] && sections.versionedSections.version == 1)
    }
}

@Suite struct DryRunVersionTests {
    @Test func aDryRunCanInsistOnItsBase() throws {
        let data = try CollectionData([Thing(id: 1)])
        try data.update([Thing(id: 2)])
        #expect(throws: CollectionDataError.self) { try data.calculateDelta([Thing(id: 3)], ifVersion: 0) }
        #expect(try data.calculateDelta([Thing(id: 3)], ifVersion: 1).delta == IndexDelta(deletions: [0], insertions: [0]))
    }
}

@Suite struct RestoredHolderTests {
    /// A holder restored from storage at version 7 goes on from there.
    @Test func aHolderRestoredAtAVersionCountsOnFromIt() throws {
        let data = try CollectionData([Thing(id: 1), Thing(id: 2)], version: 7)
        let update = try data.update([Thing(id: 2)], ifVersion: 7)
        #expect(update.baseVersion == 7 && update.version == 8 && data.version == 8)
        let sections = try CollectionSectionData([Shelf(id: 0, header: 0, items: [])], version: 3)
        #expect(try sections.append([Shelf(id: 1, header: 0, items: [Thing(id: 5)])]).version == 4)
    }
}
