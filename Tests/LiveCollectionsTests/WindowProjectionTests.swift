import LiveCollections
import PropertyBased
import TestSupport
import Testing

/// A window's projected delta replays the old window's rows to the new window's, by the same
/// rules as a whole delta, and says exactly which rows inside were reloaded.
@Suite struct WindowProjectionTests {
    static let windows = zip(Gen.int(in: 0...45), Gen.int(in: 0...45), Gen.int(in: 0...12))

    @Test func projectedDeltasReplayWindowToWindow() async throws {
        await propertyCheck(count: 600, input: Gens.flatCase, Self.windows) { flat, window in
            let delta = try IndexDelta(from: flat.old, to: flat.new)
            let projection = WindowProjection(delta)
            let (oldStart, newStart, length) = window
            let old = Self.clamp(oldStart, length, flat.old.count)
            let new = Self.clamp(newStart, length, flat.new.count)
            let oldRows = Array(flat.old[old])
            let newRows = Array(flat.new[new])
            let projected = projection.projected(old: old, new: new)
            let replayed = try projected.replay(old: oldRows, new: newRows)
            #expect(replayed.map(\.id) == newRows.map(\.id))
            #expect(replayed == newRows)
            // Exactly the rows kept inside whose content changed are reloaded.
            let changed = projected.reloads.filter { oldRows[$0.source].content != newRows[$0.target].content }
            #expect(changed.count == projected.reloads.count)
            #expect(projection.isUnchanged(old: old, new: new) == (oldRows == newRows))
            // Moves inside stay moves; nothing is moved that the whole delta kept in place.
            #expect(projected.moves.count <= delta.moves.count)
        }
        // Reversed, every item but one moves, and the middle one moves onto its own position:
        // a window of it alone is unchanged (found by the check above on CI).
        let old = [1, 2, 3, 4, 0].map { Thing(id: $0) }
        let projection = WindowProjection(try IndexDelta(from: old, to: [0, 4, 3, 2, 1].map { Thing(id: $0) }))
        #expect(projection.isUnchanged(old: 2..<3, new: 2..<3))
        #expect(!projection.isUnchanged(old: 1..<3, new: 1..<3))
    }

    /// Sections windows: the section stage projected, and the item stage kept for the sections
    /// that stay in the window, replay the old window's sections to the new window's exactly.
    @Test func projectedSectionedDeltasReplayWindowToWindow() async throws {
        await propertyCheck(count: 600, input: Gens.shelves, Gens.shelves, Self.windows) { old, new, window in
            let projection = SectionedWindowProjection(try SectionedDelta(from: old, to: new))
            let (oldStart, newStart, length) = window
            let oldRange = Self.clamp(oldStart, length, old.count)
            let newRange = Self.clamp(newStart, length, new.count)
            let oldSections = Array(old[oldRange])
            let newSections = Array(new[newRange])
            let projected = projection.projected(old: oldRange, new: newRange)
            #expect(flattened(try projected.replay(old: oldSections, new: newSections)) == newSections)
            #expect(projection.isUnchanged(old: oldRange, new: newRange) == (oldSections == newSections))
        }
    }

    /// What the changes' span alone says is so: a position it names is the one `newPosition`
    /// finds, and rows it calls unchanged are.
    @Test func whatTheChangesSpanSaysIsExact() async throws {
        await propertyCheck(count: 600, input: Gens.flatCase, Self.windows) { flat, window in
            let projection = WindowProjection(try IndexDelta(from: flat.old, to: flat.new))
            let shift = flat.new.count - flat.old.count
            var plain = 0
            for position in flat.old.indices {
                guard let now = projection.span.newPosition(ofOld: position, shift: shift) else { continue }
                #expect(now == projection.newPosition(ofOld: position))
                plain += 1
            }
            let (oldStart, _, length) = window
            let old = Self.clamp(oldStart, length, flat.old.count)
            for new in [Self.clamp(oldStart, length, flat.new.count), Self.clamp(max(0, oldStart + shift), length, flat.new.count)]
            where projection.span.isUnchanged(old: old, new: new, shift: shift) {
                #expect(Array(flat.old[old]) == Array(flat.new[new]))
            }
            // A delta that changes nothing leaves every position plain.
            if flat.old == flat.new { #expect(plain == flat.old.count) }
        }
        // Rows around a change, whose ends are each plain, are not plainly unchanged.
        let old = (0..<10).map { Thing(id: $0) }
        var new = old
        new[5].content = 1
        let projection = WindowProjection(try IndexDelta(from: old, to: new))
        #expect(projection.span.newPosition(ofOld: 2, shift: 0) == 2 && projection.span.newPosition(ofOld: 8, shift: 0) == 8)
        #expect(projection.span.newPosition(ofOld: 5, shift: 0) == nil)
        #expect(!projection.span.isUnchanged(old: 2..<9, new: 2..<9, shift: 0))
        #expect(projection.span.isUnchanged(old: 6..<9, new: 6..<9, shift: 0) && projection.span.isUnchanged(old: 0..<5, new: 0..<5, shift: 0))
    }

    @Test func positionsMapBothWays() async throws {
        await propertyCheck(count: 400, input: Gens.flatCase) { flat in
            let delta = try IndexDelta(from: flat.old, to: flat.new)
            let projection = WindowProjection(delta)
            for position in flat.old.indices {
                let now = projection.newPosition(ofOld: position)
                #expect(now.map { flat.new[$0].id } == (flat.new.contains { $0.id == flat.old[position].id } ? flat.old[position].id : nil))
                if let now { #expect(projection.oldPosition(ofNew: now) == position) }
            }
        }
    }

    @Test func anInsertAtTheTopShiftsAnOffsetWindowByOneRowEachEdge() throws {
        let old = (0..<1_000).map { Thing(id: $0) }
        let new = [Thing(id: -1)] + old
        let projection = WindowProjection(try IndexDelta(from: old, to: new))
        let delta = projection.projected(old: 500..<550, new: 500..<550)
        #expect(delta == IndexDelta(deletions: [49], insertions: [0]))
        #expect(projection.isUnchanged(old: 500..<550, new: 501..<551))
    }

    static func clamp(_ start: Int, _ length: Int, _ count: Int) -> Range<Int> {
        let lower = min(start, count)
        return lower..<min(count, lower + length)
    }
}
