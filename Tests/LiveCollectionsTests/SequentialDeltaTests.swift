import LiveCollections
import PropertyBased
import TestSupport
import Testing

/// Sequential steps replay on Android's semantics to the new list, with one move per batch
/// move and exactly the reloaded rows changed.
@Suite struct SequentialDeltaTests {
    func operations(_ steps: [ListStep]) -> [AndroidReplayer.Operation] {
        steps.map { step in
            switch step {
            case .remove(let position, let count): .remove(position: position, count: count)
            case .move(let from, let to): .move(from: from, to: to)
            case .insert(let position, let count): .insert(position: position, count: count)
            case .change(let position, let count): .change(position: position, count: count)
            }
        }
    }

    @Test func stepsReplayOnAndroidsSemantics() async throws {
        await propertyCheck(count: 400, input: Gens.flatCase) { flat in
            let delta = try IndexDelta(from: flat.old, to: flat.new)
            let sequential = delta.sequential(oldCount: flat.old.count)
            let (list, changed) = try AndroidReplayer.apply(operations(sequential.steps), to: flat.old, new: flat.new)
            #expect(list.map(\.id) == flat.new.map(\.id))
            #expect(list == flat.new)
            #expect(changed == delta.reloads.map(\.target).sorted())
            #expect(sequential.moves.count == delta.moves.count)
            #expect(sequential.steps.filter { if case .move = $0 { true } else { false } }.count == delta.moves.count)
        }
    }

    @Test func keyedMovesReplayByKey() async throws {
        await propertyCheck(count: 400, input: Gens.flatCase) { flat in
            let delta = try IndexDelta(from: flat.old, to: flat.new)
            let sequential = delta.sequential(oldCount: flat.old.count)
            var operations: [KeyedReplayer.Operation<Int, Int>] = delta.deletions.map { .remove(flat.old[$0].id) }
            operations += sequential.moves.map { .move(flat.old[$0.source].id, before: $0.before.map { flat.old[$0].id }) }
            let kept = Set(flat.new.indices).subtracting(delta.insertions)
            for position in delta.insertions {
                let next = (position + 1..<flat.new.count).first(where: kept.contains)
                operations.append(.insert(flat.new[position].id, before: next.map { flat.new[$0].id }, item: flat.new[position].content))
            }
            operations += delta.reloads.map { .update(flat.new[$0.target].id, item: flat.new[$0.target].content) }
            let list = try KeyedReplayer.apply(operations, to: flat.old.map { ($0.id, $0.content) })
            #expect(list.map(\.key) == flat.new.map(\.id) && list.map(\.item) == flat.new.map(\.content))
        }
    }

    @Test func movingTheLastOfTenThousandToTheFrontIsOneStep() throws {
        let old = (0..<10_000).map { Thing(id: $0) }
        let new = [old[9_999]] + old[..<9_999]
        let sequential = try IndexDelta(from: old, to: new).sequential(oldCount: old.count)
        #expect(sequential.steps == [.move(from: 9_999, to: 0)])
        #expect(sequential.moves == [SequentialMove(source: 9_999, before: 0, from: 9_999, to: 0)])
    }

    @Test func adjacentRemovalsInsertionsAndChangesAreRanges() throws {
        let old = (0..<8).map { Thing(id: $0) }
        let new = [
            Thing(id: 0), Thing(id: 3, content: 1), Thing(id: 4, content: 1), Thing(id: 20), Thing(id: 21), Thing(id: 5), Thing(id: 6), Thing(id: 7),
        ]
        let sequential = try IndexDelta(from: old, to: new).sequential(oldCount: old.count)
        #expect(sequential.steps == [.remove(position: 1, count: 2), .insert(position: 3, count: 2), .change(position: 1, count: 2)])
    }
}

/// Sectioned steps replay in sequence to the new sections, with as many moves as the batch.
@Suite struct SectionedSequentialDeltaTests {
    func operations(_ sequential: SectionedSequentialDelta) -> [SectionedReplayer.Operation] {
        let sections: [SectionedReplayer.Operation] = sequential.sectionSteps.map { step in
            switch step {
            case .remove(let position, let count): .removeSections(position: position, count: count)
            case .move(let from, let to): .moveSection(from: from, to: to)
            case .insert(let position, let count): .insertSections(position: position, count: count)
            case .change(let position, let count): .changeSections(position: position, count: count)
            }
        }
        let items: [SectionedReplayer.Operation] = sequential.itemSteps.map { step in
            switch step {
            case .remove(let section, let position, let count): .remove(section: section, position: position, count: count)
            case .move(let from, let to): .move(from: (from.section, from.item), to: (to.section, to.item))
            case .insert(let section, let position, let count): .insert(section: section, position: position, count: count)
            case .change(let section, let position, let count): .change(section: section, position: position, count: count)
            }
        }
        let changes: [SectionedReplayer.Operation] = sequential.sectionChanges.compactMap { step in
            if case .change(let position, let count) = step { .changeSections(position: position, count: count) } else { nil }
        }
        return sections + items + changes
    }

    @Test func stepsReplaySectionsThenItems() async throws {
        await propertyCheck(count: 400, input: Gens.shelves, Gens.shelves) { old, new in
            let delta = try SectionedDelta(from: old, to: new)
            let inserted = Set(delta.sectionDelta.insertions)
            let oldIndex = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($0.element.id, $0.offset) })
            let stageOne = new.indices.map { inserted.contains($0) ? new[$0].items.count : old[oldIndex[new[$0].id]!].items.count }
            let sequential = try delta.sequential(oldSectionCount: old.count, stageOneSizes: stageOne, finalSizes: new.map(\.items.count))
            let replayed = try SectionedReplayer.apply(
                operations(sequential), to: old.map { ($0.header, $0.items) }, new: new.map { ($0.header, $0.items) })
            #expect(replayed.map(\.header) == new.map(\.header))
            #expect(replayed.map(\.rows) == new.map(\.items))
            #expect(sequential.itemMoves.count == delta.itemDelta.moves.count)
            #expect(sequential.sectionMoves.count == delta.sectionDelta.moves.count)
        }
    }

    /// A delta that disagrees with the sizes it is sequenced for is refused with what broke,
    /// never a trap: a move from a row the section does not have, rows the kept items cannot
    /// fill, sizes for a different number of sections.
    @Test func aDeltaThatDisagreesWithTheSizesIsRefusedWithWhatBroke() {
        func moving(_ source: ItemPath, _ target: ItemPath) -> SectionedDelta {
            SectionedDelta(itemDelta: IndexPathDelta(moves: [ItemPathPair(source: source, target: target)]))
        }
        let outOfRange = moving(ItemPath(section: 0, item: 5), ItemPath(section: 0, item: 0))
        #expect(throws: ReplayError.self) { try outOfRange.sequential(oldSectionCount: 1, stageOneSizes: [2], finalSizes: [2]) }
        let targetPast = moving(ItemPath(section: 0, item: 0), ItemPath(section: 0, item: 7))
        #expect(throws: ReplayError.self) { try targetPast.sequential(oldSectionCount: 1, stageOneSizes: [2], finalSizes: [2]) }
        let tooFew = moving(ItemPath(section: 0, item: 0), ItemPath(section: 0, item: 1))
        #expect(throws: ReplayError.self) { try tooFew.sequential(oldSectionCount: 1, stageOneSizes: [2], finalSizes: [4]) }
        #expect(throws: ReplayError.self) { try tooFew.sequential(oldSectionCount: 1, stageOneSizes: [2, 2], finalSizes: [2]) }
        // The same move, with sizes that agree, is one step.
        #expect((try? tooFew.sequential(oldSectionCount: 1, stageOneSizes: [2], finalSizes: [2]))?.itemMoves.count == 1)
    }
}
