import Testing

@testable import LiveDeltaService

/// A fan-out pass reads every windowed subscriber's slot: each must give back exactly the
/// window and life it was given, packed as it is into one cache line.
@Suite struct WindowSlotsTests {
    @Test func aSlotGivesBackEveryKindOfWindowItHolds() {
        #expect(MemoryLayout<WindowSlots.Slot>.stride == 64)
        func shape(_ kind: WindowShape.Kind, _ limit: Int, _ overscan: Int) -> WindowShape {
            WindowShape(kind: kind, limit: limit, overscan: overscan)
        }
        let windows = [
            PlacedWindow(shape(.offset(30), 50, 5), anchor: 0, total: 1_000),
            PlacedWindow(shape(.offset(990), 50, 0), anchor: -1, total: 1_000),
            PlacedWindow(shape(.after, 50, 10), anchor: 17, total: 1_000),
            // Read from the top (anchors gone), and up to the end.
            PlacedWindow(shape(.after, 20, 0), anchor: -1, total: 1_000),
            PlacedWindow(shape(.before, 20, 3), anchor: 1_000, total: 1_000),
            PlacedWindow(shape(.before, 100_000, 100_000), anchor: 3, total: 5_000_000),
        ]
        for window in windows {
            for pending in [nil, Int64(123_456_789)] {
                var slot = WindowSlots.Slot(window: window, life: 3, version: 9, delivered: 4, pendingSince: pending, lastTotal: 77)
                #expect(slot.window == window && slot.window.rows == window.rows)
                #expect(slot.pendingSince == pending && slot.life == 3 && slot.version == 9 && slot.delivered == 4 && slot.lastTotal == 77)
                #expect(slot.totalDue == WindowState.totalDue(pendingSince: pending, lastTotal: 77))
                slot.window = windows[0]
                slot.pendingSince = nil
                #expect(slot.window == windows[0] && slot.pendingSince == nil && slot.totalDue == .max)
            }
        }
        // An offset window has no anchor: placed from either edge, it is the same window.
        #expect(windows[1].anchor == 0 && windows[1].rows == 990..<1_000)
    }

    @Test func livesNoSlotIsInAreLetGoAndTheOthersKeepTheirNames() {
        var slots = WindowSlots()
        let window = PlacedWindow(WindowShape(kind: .offset(0), limit: 10, overscan: 0), anchor: 0, total: 100)
        // Twenty lives in turn (a session made again and again), a slot in every fifth.
        for n in 0..<20 {
            let life = slots.life("life-\(n)")
            #expect(slots.life("life-\(n)") == life)
            if n % 5 == 0 {
                slots.slots.append(WindowSlots.Slot(window: window, life: life, version: 1, delivered: 1, pendingSince: nil, lastTotal: 0))
            }
        }
        #expect(slots.slots.map { slots.lives[Int($0.life)] } == ["life-0", "life-5", "life-10", "life-15"])
        #expect(slots.lives.count <= 8)
        #expect(slots.knownLife("life-1") == nil && slots.knownLife("life-19") != nil)
    }
}
