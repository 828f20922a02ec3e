import Foundation
import LiveDeltaKit
import TestSupport
import Testing
import UIKitTranscribed

/// The UIKit adapters (UIKitViews.swift), compiled against UIKit's transcribed declarations,
/// hand BatchUpdater's calls to UIKit's own methods; and `LiveList.snapshot` gives a diffable
/// data source the list by id with exactly the rows changed in place marked.
@MainActor
struct UIKitAdapterTests {
    /// From a, b, c to c, d, B: a deleted, d inserted, c moved to the front, b changed.
    static var answer: DeltaAnswer {
        var answer = DeltaAnswer()
        answer.delta = Delta(deletions: [0], insertions: [1], moves: [Move(source: 2, target: 0)], reloads: [Move(source: 1, target: 2)])
        return answer
    }

    @Test func aTableViewIsGivenItsRowCallsAnimated() {
        let view = UITableView(frame: .zero, style: .plain)
        var data = ["a", "b", "c"]
        BatchUpdater.apply(Self.answer, from: data, to: ["c", "d", "B"], on: view) { data = $0 }
        #expect(data == ["c", "d", "B"])
        #expect(
            view.calls == [
                "performBatchUpdates", "deleteRows [[0, 0]] automatic", "insertRows [[0, 1]] automatic", "moveRow [0, 2] [0, 0]",
                "performBatchUpdates", "reloadRows [[0, 2]] automatic",
            ])
        let again = UITableView(frame: .zero, style: .plain)
        BatchUpdater.apply(Self.answer, from: ["a", "b", "c"], to: ["c", "d", "B"], on: again, refresh: .reconfigure) { data = $0 }
        #expect(again.calls.last == "reconfigureRows [[0, 2]]")
    }

    @Test func aTableViewIsGivenItsSectionCallsAnimated() {
        let view = UITableView(frame: .zero, style: .plain)
        var answer = DeltaAnswer()
        answer.sectionDelta = Delta(deletions: [0], insertions: [1])
        answer.itemDelta = Delta()  // an inserted section's rows come with it (the real /diff's answer)
        let old = [LiveSection(id: .integer(1), items: ["a"]), LiveSection(id: .integer(2), items: ["b"])]
        let new = [LiveSection(id: .integer(2), items: ["b"]), LiveSection(id: .integer(3), items: ["c"])]
        var data = old
        #expect(BatchUpdater.apply(answer, from: old, to: new, on: view) { data = $0 } == .animated)
        #expect(data == new)
        #expect(
            view.calls == [
                "performBatchUpdates", "deleteSections [0] automatic", "insertSections [1] automatic", "performBatchUpdates",
                "deleteRows [] automatic",
                "insertRows [] automatic",
            ])
    }

    @Test func aCollectionViewIsGivenItsOwnCalls() {
        let view = UICollectionView(frame: .zero, collectionViewLayout: UICollectionViewLayout())
        var data = ["a", "b", "c"]
        BatchUpdater.apply(Self.answer, from: data, to: ["c", "d", "B"], on: view, refresh: .reconfigure) { data = $0 }
        #expect(
            view.calls == [
                "performBatchUpdates", "deleteItems [[0, 0]]", "insertItems [[0, 1]]", "moveItem [0, 2] [0, 0]", "performBatchUpdates",
                "reconfigureItems [[0, 2]]",
            ])
        let wrong = UICollectionView(frame: .zero, collectionViewLayout: UICollectionViewLayout())
        let outcome = BatchUpdater.apply(Self.answer, from: ["a", "b"], to: ["c", "d", "B"], on: wrong) { data = $0 }
        #expect(wrong.calls == ["reloadData"] && outcome != .animated, "a delta that does not fit is a reload, never a batch")
    }

    /// A diffable data source following a session: after every version its snapshot is the
    /// list by id, and the rows marked are exactly those whose content changed under their id.
    @Test func aDiffableSnapshotMarksExactlyTheRowsChangedInPlace() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        var rows = (0..<40).map { Film(id: $0, title: "film \($0)") }
        _ = try await client.putSession("diffable", .items(rows))
        let list = LiveList<Film>()
        let source = UICollectionViewDiffableDataSource<Int, Int>(
            collectionView: UICollectionView(frame: .zero, collectionViewLayout: UICollectionViewLayout())
        ) { _, _, _ in nil }
        var refusals: [String] = []
        list.onChange = { change in
            do {
                let snapshot: NSDiffableDataSourceSnapshot<Int, Int> = try list.snapshot(section: 0, id: \.id, after: change)
                source.apply(snapshot)
            } catch { refusals.append("\(error)") }
        }
        let following = Task { try await list.follow("diffable", with: client) }
        defer { following.cancel() }
        try await Self.until { list.version == 0 }
        var random = SeededGenerator(state: 5)
        var nextID = 100
        for round in 0..<40 {
            let before = rows
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let at = Int.random(in: 0..<rows.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where rows.count > 5: rows.remove(at: at)
                case 1:
                    rows.insert(Film(id: nextID, title: "new \(nextID)"), at: at)
                    nextID += 1
                case 2: rows.insert(rows.remove(at: at), at: Int.random(in: 0..<rows.count, using: &random))
                default: rows[at].title += "!"
                }
            }
            let version = try await client.update("diffable", to: .items(rows)).version
            try await Self.until { list.version == version }
            let old = Dictionary(uniqueKeysWithValues: before.map { ($0.id, $0) })
            let expected = rows.filter { row in old[row.id].map { $0 != row } ?? false }.map(\.id)
            let snapshot = try #require(source.applied.last)
            #expect(snapshot.itemIdentifiers == rows.map(\.id), "round \(round)")
            #expect(Set(snapshot.reconfiguredItemIdentifiers) == Set(expected), "round \(round)")
            #expect(snapshot.reloadedItemIdentifiers.isEmpty)
        }
        #expect(refusals.isEmpty)
    }

    @Test func aSectionedSnapshotReloadsRenamedSectionsAndRefusesRepeatedIds() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        func section(_ id: Int, _ title: String, _ films: [Film]) -> LiveSection<Film> {
            LiveSection(id: .integer(id), fields: ["title": .string(title)], items: films)
        }
        let (a, b, c) = (Film(id: 1, title: "Alien"), Film(id: 2, title: "Brazil"), Film(id: 3, title: "Cabaret"))
        _ = try await client.putSession("sectioned", .sections([section(1, "Monday", [a, b]), section(2, "Tuesday", [c])]))
        let list = LiveList<Film>()
        var snapshots: [NSDiffableDataSourceSnapshot<JSONValue, Int>] = []
        var refusals: [String] = []
        list.onChange = { change in
            do { snapshots.append(try list.snapshot(id: \.id, after: change)) } catch { refusals.append("\(error)") }
        }
        let following = Task { try await list.follow("sectioned", with: client) }
        defer { following.cancel() }
        try await Self.until { list.version == 0 }
        let renamed = Film(id: 2, title: "Brazil (1985)")
        let version = try await client.update("sectioned", to: .sections([section(2, "Tuesday", [c, a]), section(1, "Mon.", [renamed])])).version
        try await Self.until { list.version == version }
        let snapshot = try #require(snapshots.last)
        #expect(snapshot.sectionIdentifiers == [.integer(2), .integer(1)])
        #expect(snapshot.itemIdentifiers(inSection: .integer(2)) == [3, 1] && snapshot.itemIdentifiers(inSection: .integer(1)) == [2])
        #expect(snapshot.reloadedSectionIdentifiers == [.integer(1)], "Monday was renamed")
        #expect(snapshot.reconfiguredItemIdentifiers == [], "Brazil changed, in a section reloaded whole")
        #expect(refusals.isEmpty)
    }

    @Test func aListWithRepeatedIdsIsRefusedNotHandedOver() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        let alien = Film(id: 1, title: "Alien")
        _ = try await client.putSession("repeats", .items([alien, alien]), options: SessionOptions(unique: false))
        let list = LiveList<Film>()
        let following = Task { try await list.follow("repeats", with: client) }
        defer { following.cancel() }
        try await Self.until { list.version == 0 }
        #expect(throws: SnapshotRefusal.self) { let _: NSDiffableDataSourceSnapshot<Int, Int> = try list.snapshot(section: 0, id: \.id) }
        do {
            let _: NSDiffableDataSourceSnapshot<Int, Int> = try list.snapshot(section: 0, id: \.id)
        } catch {
            #expect("\(error)" == "the id 1 repeats: a diffable data source needs unique identifiers")
        }
        #expect(throws: SnapshotRefusal.self) { let _: NSDiffableDataSourceSnapshot<JSONValue, Int> = try list.snapshot(id: \.id) }
    }

    static func until(_ condition: @MainActor () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(60)
        while !condition() {
            guard Date() < deadline else { throw CancellationError() }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
    }
}
