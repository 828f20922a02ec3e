import Foundation
import LiveDeltaKit
import TestSupport
import Testing

/// A windowed LiveList against the real binary: 30 rows of a 600-row session (and 8 sections of
/// a 150-section one) followed through commits near and inside the window and through scrolls;
/// every batch goes through the adapter into the UIKit-rules double, which breaks no rule and
/// ends on the window's rows (sections).
@Suite struct WindowListTests {
    typealias Box = BatchUpdateTests.Box

    /// With each delta carrying only the rows it inserts or changes (a list's default), and
    /// carrying the window's rows whole.
    @Test(arguments: [nil, CarriedRows.all]) func aWindowedListDrivesTheViewThroughCommitsAndScrolls(rows carried: CarriedRows?) async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        var random = BatchUpdateTests.Seeded(state: 11)
        var rows = (0..<600).map { Row(id: $0, v: 0) }
        var nextID = 1_000
        _ = try await client.putSession("window", .items(rows))
        let (list, view, data) = await MainActor.run { BatchUpdateTests.observedList() }
        var options = FollowOptions()
        options.window = Window(.offset(100), limit: 30)
        options.rows = carried
        let following = Task { try await list.follow("window", with: client, options: options) }
        var offset = 100
        for round in 0..<60 {
            // A few rows removed, inserted, moved and changed, most of them around the window.
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = min(rows.count - 1, max(0, offset + Int.random(in: -20...50, using: &random)))
                switch Int.random(in: 0..<4, using: &random) {
                case 0: rows.remove(at: at)
                case 1:
                    rows.insert(Row(id: nextID, v: 0), at: at)
                    nextID += 1
                case 2: rows.insert(rows.remove(at: at), at: min(rows.count, max(0, at + Int.random(in: -40...40, using: &random))))
                default: rows[at].v += 1
                }
            }
            let answer = try await client.update("window", to: .items(rows))
            if round % 6 == 5 {
                offset = Int.random(in: 0...550, using: &random)
                await list.moveWindow(Window(.offset(offset), limit: 30))
            }
            #expect(try await Self.reaches(list, version: answer.version, offset: offset), "round \(round)")
        }
        following.cancel()
        let (violations, shown, expected, reloads, items) = await MainActor.run {
            (view.violations, view.shown, data.value, view.reloads, list.items)
        }
        #expect(violations == [])
        #expect(shown == expected)
        #expect(items == Array(rows[offset..<offset + 30]))
        #expect(reloads == 1, "only the first reset reloads: every commit and every scroll animates")
    }

    /// Sections: rows moving between sections inside and outside the window, sections coming,
    /// going, moving and renamed around it, and scrolls; the window is whole sections.
    @Test func aWindowOfSectionsDrivesTheViewThroughCommitsAndScrolls() async throws {
        let server = try ServerProcess()
        defer { _ = server.stop() }
        let client = LiveDeltaClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        var random = BatchUpdateTests.Seeded(state: 12)
        var nextID = 10_000
        var shelves = (0..<150).map { n in
            LiveSection<Row>(id: .string("s\(n)"), fields: ["title": .number(0)], items: [Row(id: n * 10, v: 0), Row(id: n * 10 + 1, v: 0)])
        }
        _ = try await client.putSession("shelves", .sections(shelves))
        let (list, view, data) = await MainActor.run { BatchUpdateTests.observedList() }
        var options = FollowOptions()
        options.window = Window(.offset(40), limit: 8)
        let following = Task { try await list.follow("shelves", with: client, options: options) }
        var offset = 40
        for round in 0..<40 {
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = min(shelves.count - 1, max(0, offset + Int.random(in: -6...12, using: &random)))
                let other = min(shelves.count - 1, max(0, at + Int.random(in: -20...20, using: &random)))
                switch Int.random(in: 0..<6, using: &random) {
                case 0: shelves.remove(at: at)
                case 1:
                    shelves.insert(LiveSection(id: .string("n\(nextID)"), fields: ["title": .number(0)], items: [Row(id: nextID, v: 0)]), at: at)
                    nextID += 1
                case 2: shelves.insert(shelves.remove(at: at), at: other)
                case 3: shelves[at].fields["title"] = .number(Double(round))
                case 4:
                    if !shelves[other].items.isEmpty { shelves[at].items.insert(shelves[other].items.removeFirst(), at: 0) }
                default:
                    if !shelves[at].items.isEmpty { shelves[at].items[0].v += 1 }
                }
            }
            let answer = try await client.update("shelves", to: .sections(shelves))
            if round % 6 == 5 {
                offset = Int.random(in: 0...(shelves.count - 8), using: &random)
                await list.moveWindow(Window(.offset(offset), limit: 8))
            }
            #expect(try await Self.reaches(list, version: answer.version, offset: offset), "round \(round)")
        }
        following.cancel()
        let (violations, shown, expected, reloads, sections) = await MainActor.run {
            (view.violations, view.shown, data.value, view.reloads, list.sections)
        }
        #expect(violations == [])
        #expect(shown == expected)
        #expect(sections.map(\.id) == shelves[offset..<offset + 8].map(\.id))
        #expect(sections.map(\.items) == shelves[offset..<offset + 8].map(\.items))
        #expect(sections.map { $0.fields["title"] } == shelves[offset..<offset + 8].map { $0.fields["title"] })
        #expect(reloads == 1, "only the first reset reloads: every commit and every scroll animates")
    }

    /// Waits until `list` is at `version` with its window at `offset`. Commits that change none
    /// of its rows reach it as a total, within about a second. The deadline only keeps a broken
    /// list from hanging the suite (15 s was passed once on a loaded machine).
    static func reaches(_ list: LiveList<Row>, version: Int, offset: Int) async throws -> Bool {
        let deadline = Date().addingTimeInterval(60)
        func reached() async -> Bool { await MainActor.run { list.version == version && list.window?.offset == offset } }
        while await !reached(), Date() < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
        return await reached()
    }
}
