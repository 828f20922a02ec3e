import LiveCollections
import PropertyBased
import TestSupport
import Testing

/// Downgrades any flat delta with a move to `reloadData`, and asks for precision otherwise.
struct NoMovesPlease: AnimationStyleDelegate {
    func preferredItemAnimationStyle(for delta: IndexDelta, proposed: AnimationStyle) -> AnimationStyle {
        delta.moves.isEmpty ? .preciseAnimations : .reloadData
    }
}

@Suite struct AnimationPolicyTests {
    let small = (0..<5).map { Thing(id: $0) }

    @Test func smallChangesArePrecise() throws {
        let result = try AnimationPolicy().animatedDelta(from: small, to: Array(small.dropFirst()))
        #expect(result.animation == .preciseAnimations)
        #expect(result.delta == IndexDelta(deletions: [0]))
        #expect(result.deletedIndices == [0])
    }

    @Test func aCollectionOverTheDataThresholdIsNotDiffed() throws {
        let policy = AnimationPolicy(dataCountAnimationThreshold: 4)
        let result = try policy.animatedDelta(from: small, to: Array(small.dropLast(2)))
        #expect(result.animation == .reloadSections)
        #expect(result.delta == nil)
        #expect(result.deletedIndices == [3, 4])
        // At the threshold exactly, it still is.
        #expect(try policy.animatedDelta(from: Array(small.prefix(4)), to: []).animation == .preciseAnimations)
    }

    @Test func overTheThresholdDuplicatesAreStillCaught() {
        let policy = AnimationPolicy(dataCountAnimationThreshold: 1)
        #expect(throws: DuplicateIdentifierError.self) {
            try policy.animatedDelta(from: small, to: [Thing(id: 1), Thing(id: 1)])
        }
    }

    @Test func moreChangesThanTheDeltaThresholdAreNotPrecise() throws {
        let policy = AnimationPolicy(deltaCountAnimationThreshold: 2)
        let three = try policy.animatedDelta(from: small, to: Array(small.dropFirst(3)))
        #expect(three.animation == .reloadSections)
        #expect(three.delta?.changeCount == 3)
        #expect(try policy.animatedDelta(from: small, to: Array(small.dropFirst(2))).animation == .preciseAnimations)
    }

    @Test func theDelegateCanDowngradeButNeverUpgrade() throws {
        let policy = AnimationPolicy(deltaCountAnimationThreshold: 1, delegate: NoMovesPlease())
        let moved = try policy.animatedDelta(from: small, to: [small[4]] + small.dropLast())
        #expect(moved.animation == .reloadData)
        let tooMany = try policy.animatedDelta(from: small, to: [])
        #expect(tooMany.animation == .reloadSections)
    }

    @Test func sectionedItemsOverTheThresholdReloadData() throws {
        let old = [Shelf(id: 0, header: 0, items: small)]
        let new = [Shelf(id: 0, header: 1, items: Array(small.reversed()))]
        let policy = AnimationPolicy(dataCountAnimationThreshold: 4)
        let result = try policy.animatedDelta(from: old, to: new)
        #expect(result.sectionAnimation == .preciseAnimations)
        #expect(result.sectionDelta == IndexDelta(reloads: [IndexPair(source: 0, target: 0)]))
        #expect(result.itemAnimation == .reloadData)
        #expect(result.itemDelta == nil)
    }

    @Test func sectionedItemsAreImpreciseWhenSectionsAre() throws {
        let old = (0..<3).map { Shelf(id: $0, header: 0, items: [Thing(id: $0)]) }
        let policy = AnimationPolicy(deltaCountAnimationThreshold: 1)
        let result = try policy.animatedDelta(from: old, to: Array(old.reversed()))
        #expect(result.sectionAnimation == .reloadSections)
        #expect(result.itemAnimation == .reloadData)
        #expect(result.itemDelta == nil)
    }

    /// Over either threshold a session's rules (`keepsExactDelta`) still work out the exact
    /// delta, the one rules without thresholds answer, for live windows to project; what they
    /// answer a client of the whole collection stays as the thresholds say. So do a session's
    /// holders, and the delta of a sectioned edit.
    @Test func aSessionsRulesKeepTheExactDeltaOverTheThresholds() async throws {
        let plain = AnimationPolicy(dataCountAnimationThreshold: 12, deltaCountAnimationThreshold: 3)
        var session = plain
        session.keepsExactDelta = true
        let unlimited = AnimationPolicy(dataCountAnimationThreshold: .max, deltaCountAnimationThreshold: .max)
        await propertyCheck(count: 300, input: Gens.flatCase) { flat in
            let kept = try session.animatedDelta(from: flat.old, to: flat.new)
            let answered = try plain.animatedDelta(from: flat.old, to: flat.new)
            #expect(kept.exact == (try unlimited.animatedDelta(from: flat.old, to: flat.new).delta))
            #expect(kept.delta == answered.delta && kept.animation == answered.animation)
            let held = try CollectionData(flat.old, policy: session).update(flat.new)
            #expect(held.exactDelta == kept.exact && held.delta == answered.delta)
        }
        await propertyCheck(count: 300, input: Gens.shelves, Gens.shelves) { old, new in
            let whole = try SectionedDelta(from: old, to: new)
            let kept = try session.animatedDelta(from: old, to: new)
            let answered = try plain.animatedDelta(from: old, to: new)
            #expect(kept.exact == whole)
            #expect(kept.sectionDelta == answered.sectionDelta && kept.itemDelta == answered.itemDelta)
            #expect(kept.sectionAnimation == answered.sectionAnimation && kept.itemAnimation == answered.itemAnimation)
            #expect(try CollectionSectionData(old, policy: session).update(new).exact == whole)
            let edited = try session.animatedDelta(from: old, to: new, touchedOld: Array(old.indices), touchedNew: Array(new.indices))
            #expect(edited?.exact == whole)
        }
    }

    @Test func stylesAreOrderedFromPreciseToCoarse() {
        #expect(AnimationStyle.preciseAnimations < .reloadSections)
        #expect(AnimationStyle.reloadSections < .reloadData)
    }
}
