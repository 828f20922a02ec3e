import AppKitTranscribed
import Foundation
import LiveDeltaKit
import Testing

/// The AppKit adapters (AppKitViews.swift), compiled against AppKit's transcribed declarations,
/// hand BatchUpdater's calls to AppKit's own methods.
@MainActor
struct AppKitAdapterTests {
    /// From a, b, c to c, d, B: a deleted, d inserted, c moved to the front, b changed.
    static var answer: DeltaAnswer {
        var answer = DeltaAnswer()
        answer.delta = Delta(deletions: [0], insertions: [1], moves: [Move(source: 2, target: 0)], reloads: [Move(source: 1, target: 2)])
        return answer
    }

    @Test func aCollectionViewIsGivenTheBatchInSets() {
        let view = NSCollectionView(frame: .zero)
        var data = ["a", "b", "c"]
        let outcome = BatchUpdater.apply(Self.answer, from: data, to: ["c", "d", "B"], on: view) { data = $0 }
        #expect(outcome == .animated && data == ["c", "d", "B"])
        #expect(
            view.calls == [
                "performBatchUpdates", "deleteItems [[0, 0]]", "insertItems [[0, 1]]", "moveItem [0, 2] [0, 0]",
                "performBatchUpdates", "reloadItems [[0, 2]]",
            ])
    }

    @Test func aTableViewReloadsForEachBatch() {
        let view = NSTableView(frame: .zero)
        var data = ["a", "b", "c"]
        BatchUpdater.apply(Self.answer, from: data, to: ["c", "d", "B"], on: view) { data = $0 }
        #expect(view.calls == ["reloadData", "reloadData"] && data == ["c", "d", "B"])
    }
}
