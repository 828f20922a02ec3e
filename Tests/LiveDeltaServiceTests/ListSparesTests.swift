import Testing

@testable import LiveDeltaService

/// A long list's storage is handed to a later list only once no one else holds it, and never
/// while anyone does: a list built in storage still held would change another's items.
@Suite struct ListSparesTests {
    @Test func anArrayIsUniqueOnlyWhileNoOneElseHoldsItsStorage() {
        // Each answer is taken before it is checked: `#expect` holds what it is given.
        var list = Array(0..<1_000)
        let alone = ListSpares<Int>.isUnique(&list)
        var copy: [Int]? = list
        let shared = ListSpares<Int>.isUnique(&list)
        let copied = copy?.count
        copy = nil
        let aloneAgain = ListSpares<Int>.isUnique(&list)
        var empty: [Int] = []
        let emptyOne = ListSpares<Int>.isUnique(&empty)
        #expect(alone && !shared && copied == 1_000 && aloneAgain && !emptyOne)
    }

    @Test func aListNoOneHoldsIsBuiltInAgainAndAHeldOneNever() {
        let spares = ListSpares<Int>(shortest: 1_000, watched: 4)
        var held = spares.emptyList(capacity: 2_000)
        held.append(contentsOf: 0..<2_000)
        spares.watch(held)
        // Still held: a new list has storage of its own, and the held list keeps its items.
        var second = spares.emptyList(capacity: 2_000)
        #expect(address(second) != address(held))
        second.append(contentsOf: repeatElement(-1, count: 2_000))
        #expect(held == Array(0..<2_000))
        spares.watch(second)
        // Let go of: the next list of its length is built in its storage, from empty.
        let freed = address(held)
        held = []
        let third = spares.emptyList(capacity: 1_500)
        #expect(address(third) == freed)
        #expect(third.isEmpty && third.capacity >= 1_500)
        // Too long for any spare: new storage.
        #expect(address(spares.emptyList(capacity: 100_000)) != freed)
        #expect(second == Array(repeating: -1, count: 2_000))
    }

    @Test func aGrowingListIsBuiltInTheStorageOfOneSomeCommitsBack() {
        let spares = ListSpares<Int>(shortest: 1_000, watched: 4)
        // Each list one longer than the one before, and the two newest held (a history).
        var history: [[Int]] = []
        var addresses: [UnsafeRawPointer?] = []
        for length in 10_000..<10_040 {
            var list = spares.emptyList(capacity: length)
            list.append(contentsOf: 0..<length)
            spares.watch(list)
            addresses.append(address(list))
            history.append(list)
            if history.count > 2 { history.removeFirst() }
        }
        // Three storages in turn: two held, one free to build the next list in.
        #expect(Set(addresses).count == 3)
        #expect(history.last == Array(0..<10_039))
    }

    @Test func storageReadiedForAFeedIsWhatItsFirstCommitsAreBuiltIn() {
        let spares = ListSpares<Int>(shortest: 1_000, watched: 8)
        func built(_ length: Int) -> [Int] {
            var list = spares.emptyList(capacity: length)
            list.append(contentsOf: 0..<length)
            spares.watch(list)
            return list
        }
        // A session followed by no one: its list, and the one before it, let go of (a spare).
        var session = built(10_000)
        session = built(10_000)
        #expect(spares.free(capacity: 10_000) == 1)
        // A feed starts: one more is readied, and asking again readies no third.
        spares.reserve(capacity: 10_000)
        spares.reserve(capacity: 10_000)
        #expect(spares.free(capacity: 10_000) == 2)
        // Two spares are the most readied: another long session's feed gets none now.
        spares.reserve(capacity: 20_000)
        #expect(spares.free(capacity: 20_000) == 0 && spares.free(capacity: 10_000) == 2)
        // Each commit builds beside the session's list and the one the feed's latest step
        // holds: the first two take the storages that were free, and the list the history
        // lets go of after the second is free for the third.
        var history: [Int] = []
        var free: [Int] = []
        for length in 10_001...10_003 {
            let next = built(length)
            free.append(spares.free(capacity: length))
            history = session
            session = next
        }
        #expect(free == [1, 0, 0])
        #expect(spares.free(capacity: 10_004) == 1)
        #expect(session == Array(0..<10_003) && history == Array(0..<10_002))
        // A short list needs none.
        spares.reserve(capacity: 100)
        #expect(spares.free(capacity: 100) == 1)
    }

    @Test func shortListsAreNotWatchedAndOneSpareAtMostIsKept() {
        let spares = ListSpares<Int>(shortest: 1_000, watched: 4)
        spares.watch(Array(0..<100))
        #expect(spares.count == 0)
        // Three lists let go of once watched: a list is held while it is watched, so each
        // watch finds the one before it a spare, and the newest spare is all it keeps.
        for _ in 0..<3 { spares.watch(Array(0..<1_000)) }
        #expect(spares.count == 2)
        // Held lists are watched up to the limit, the oldest let go first.
        let held = (0..<6).map { Array(repeating: $0, count: 1_000) }
        for list in held { spares.watch(list) }
        #expect(spares.count == 4)
    }

    private func address(_ list: [Int]) -> UnsafeRawPointer? {
        list.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }
}
