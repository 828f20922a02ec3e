import Foundation
import LiveDeltaKit
import TestSupport
import Testing

struct Row: Codable, Sendable, Equatable {
    var id: Int
    var v: Int
}

/// The batch adapter against the UIKit-rules double: 2,000 random pairs from the real `/diff`
/// (flat, sectioned, repeated ids) applied with no rule broken and the view ending on the new
/// data; and a delta that does not fit is a reload, never a broken batch.
@Suite(.serialized) struct BatchUpdateTests {
    typealias Seeded = SeededGenerator

    static func rows(_ random: inout Seeded) -> [Row] {
        (0..<40).shuffled(using: &random).prefix(Int.random(in: 0...25, using: &random)).map { Row(id: $0, v: Int.random(in: 0...2, using: &random)) }
    }

    static func shelves(_ random: inout Seeded) -> [LiveSection<Row>] {
        var sections = (0..<7).shuffled(using: &random).prefix(Int.random(in: 0...6, using: &random)).map {
            LiveSection<Row>(id: .string("s\($0)"), fields: ["title": .string("t\(Int.random(in: 0...1, using: &random))")], items: [])
        }
        for id in (0..<30).shuffled(using: &random).prefix(Int.random(in: 0...25, using: &random)) where !sections.isEmpty {
            sections[Int.random(in: 0..<sections.count, using: &random)].items.append(Row(id: id, v: Int.random(in: 0...1, using: &random)))
        }
        return sections
    }

    static func words(_ random: inout Seeded) -> [String] {
        (0..<Int.random(in: 0...18, using: &random)).map { _ in ["A", "B", "C", "D"].randomElement(using: &random)! }
    }

    @MainActor
    final class Box<Value> {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    @MainActor
    static func applyFlat<Item: Codable & Sendable & Equatable>(
        _ answer: DeltaAnswer, old: [Item], new: [Item], refresh: RowRefresh = .reload
    ) -> (UIKitRulesDouble<Item>, BatchUpdater.Outcome) {
        let data = Box(old)
        let view = UIKitRulesDouble<Item>(showing: [old]) { [data.value] }
        let outcome = BatchUpdater.apply(answer, from: old, to: new, on: view, refresh: refresh) { data.value = $0 }
        return (view, outcome)
    }

    @Test func twoThousandRandomPairsFromTheServerBreakNoRule() async throws {
        let server = try ServerProcess()
        let client = LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        var random = Seeded(state: 42)
        var animated = 0
        var reconfigured = 0
        for round in 0..<800 {
            let (old, new) = (Self.rows(&random), Self.rows(&random))
            let answer = try await client.diff(.items(old), .items(new))
            // Every other round shows changed rows by reconfiguring their cells.
            let refresh: RowRefresh = round.isMultiple(of: 2) ? .reload : .reconfigure
            let (view, outcome) = await Self.applyFlat(answer, old: old, new: new, refresh: refresh)
            #expect(await view.violations == [], "flat round \(round): \(old) -> \(new)")
            #expect(await view.shown == [new], "flat round \(round)")
            if outcome == .animated { animated += 1 }
            reconfigured += await view.reconfigured
        }
        #expect(reconfigured > 0, "some rows were reconfigured")
        for round in 0..<500 {
            let (old, new) = (Self.words(&random), Self.words(&random))
            let answer = try await client.diff(.items(old), .items(new), options: SessionOptions(unique: false))
            let (view, _) = await Self.applyFlat(answer, old: old, new: new)
            #expect(await view.violations == [], "repeated round \(round): \(old) -> \(new)")
            #expect(await view.shown == [new], "repeated round \(round)")
        }
        for round in 0..<700 {
            let (old, new) = (Self.shelves(&random), Self.shelves(&random))
            let answer = try await client.diff(.sections(old), .sections(new))
            let (violations, shown, outcome) = await MainActor.run {
                let data = Box(old)
                let view = UIKitRulesDouble<Row>(showing: old.map(\.items)) { data.value.map(\.items) }
                let refresh: RowRefresh = round.isMultiple(of: 2) ? .reload : .reconfigure
                let outcome = BatchUpdater.apply(answer, from: old, to: new, on: view, refresh: refresh) { data.value = $0 }
                return (view.violations, view.shown, outcome)
            }
            #expect(violations == [], "sectioned round \(round): \(old) -> \(new)")
            #expect(shown == new.map(\.items), "sectioned round \(round)")
            #expect(outcome == .animated, "sectioned round \(round)")
        }
        #expect(animated == 800, "every flat pair animated (no delta fell back to a reload)")
        _ = server.stop()
    }

    /// A LiveList whose every change goes through the adapter into a UIKit-rules double: a
    /// reset reloads it, a delta is a batch (flat, or sectioned); `data` is what it shows.
    @MainActor static func observedList() -> (LiveList<Row>, UIKitRulesDouble<Row>, Box<[[Row]]>) {
        let list = LiveList<Row>()
        let data = Box<[[Row]]>([])
        let view = UIKitRulesDouble<Row>(showing: []) { data.value }
        list.onChange = { change in
            switch change {
            case .reset:
                data.value = list.isSectioned ? list.sections.map(\.items) : [list.items]
                view.reloadData()
            case .delta(let answer, let oldItems, let oldSections):
                if list.isSectioned {
                    BatchUpdater.apply(answer, from: oldSections, to: list.sections, on: view) { data.value = $0.map(\.items) }
                } else {
                    BatchUpdater.apply(answer, from: oldItems, to: list.items, on: view) { data.value = [$0] }
                }
            case .window: break
            }
        }
        return (list, view, data)
    }

    /// Live sessions, flat and sectioned: each version a LiveList takes goes through the adapter
    /// into the double, which ends on the session's collection with no rule broken.
    @Test func liveSessionsDriveTheViewWithoutBreakingARule() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        var random = Seeded(state: 7)
        for sectioned in [false, true] {
            let id = sectioned ? "live-shelves" : "live-rows"
            _ = try await client.putSession(id, sectioned ? .sections(Self.shelves(&random)) : .items(Self.rows(&random)))
            let (list, view, data) = await MainActor.run { Self.observedList() }
            let following = Task { try await list.follow(id, with: client) }
            for _ in 0..<300 {
                let answer = try await client.update(id, to: sectioned ? .sections(Self.shelves(&random)) : .items(Self.rows(&random)))
                let deadline = Date().addingTimeInterval(10)
                while await list.version != answer.version, Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
                #expect(await list.version == answer.version)
            }
            following.cancel()
            let (violations, shown, expected, reloads) = await MainActor.run {
                (view.violations, view.shown, data.value, view.reloads)
            }
            #expect(violations == [], "\(id)")
            #expect(shown == expected, "\(id)")
            #expect(reloads == 1, "\(id): only the first reset reloads; every version animates")
        }
    }

    @Test @MainActor func theDoubleRefusesWhatUIKitRefuses() {
        typealias Double = UIKitRulesDouble<Int>
        let cases: [(String, (Double) -> Void)] = [
            (
                "delete and reload",
                { view in
                    view.deleteItems(at: [[0, 1]]); view.reloadItems(at: [[0, 1]])
                }
            ),
            (
                "delete and move from",
                { view in
                    view.deleteItems(at: [[0, 1]]); view.moveItem(at: [0, 1], to: [0, 0])
                }
            ),
            (
                "insert and move to",
                { view in
                    view.insertItems(at: [[0, 0]]); view.moveItem(at: [0, 2], to: [0, 0])
                }
            ),
            ("out of range", { view in view.deleteItems(at: [[0, 5]]) }),
            ("a count that does not add up", { view in view.deleteItems(at: [[0, 0]]) }),
        ]
        for (name, batch) in cases {
            let view = Double(showing: [[1, 2, 3]]) { [[1, 2, 3]] }
            view.performBatch { batch(view) }
            #expect(view.violations.count == 1, "\(name)")
        }
    }

    @Test @MainActor func aDeltaThatDoesNotFitIsAReloadNeverABrokenBatch() {
        let old = [Row(id: 1, v: 0), Row(id: 2, v: 0)]
        let new = [Row(id: 2, v: 0), Row(id: 1, v: 0)]
        var answer = DeltaAnswer()
        answer.delta = Delta(deletions: [0], insertions: [], moves: [Move(source: 0, target: 1)])
        let (view, outcome) = Self.applyFlat(answer, old: old, new: new)
        guard case .reloaded = outcome else {
            Issue.record("expected a reload, got \(outcome)")
            return
        }
        #expect(view.violations == [] && view.reloads == 1 && view.shown == [new])
        let (none, noneOutcome) = Self.applyFlat(DeltaAnswer(), old: old, new: new)
        #expect(noneOutcome != .animated && none.shown == [new])
    }
}
