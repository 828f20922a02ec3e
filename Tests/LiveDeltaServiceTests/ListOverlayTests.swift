import PropertyBased
import Testing

@testable import LiveDeltaService

/// A `ListOverlay` must read as the array the same edits leave, whether they name places by
/// position (a patch) or by node (a keyed edit), through runs of held items split, chunk
/// splits and emptied chunks.
@Suite struct ListOverlayTests {
    /// An element of the model: its value, and its node where the overlay made it one.
    struct Entry {
        var value: Int
        var node: Int?
    }

    @Test func followsAnArrayThroughEditsByPositionAndByNode() async {
        await propertyCheck(
            count: 200, input: Gen.int(in: 0...90), Gen.int(in: 0...1_000_000).array(of: 1...400), Gen.int(in: 1...8), Gen.int(in: 0...6)
        ) { start, edits, chunkSize, spacing in
            // Held item i reads as i; every `spacing`-th one is a node from the start.
            let rows = spacing == 0 ? [] : Array(stride(from: 0, to: start, by: spacing))
            var list = ListOverlay<Int>(heldCount: start, nodes: rows, chunkSize: chunkSize) { $0 }
            var model = (0..<start).map { Entry(value: $0, node: nil) }
            for (node, row) in rows.enumerated() { model[row].node = node }
            for (step, edit) in edits.enumerated() {
                let place = edit / 8
                switch edit % 8 {
                case 0:
                    let index = place % (model.count + 1)
                    let done = list.insert(-step, at: index)
                    #expect(done)
                    model.insert(Entry(value: -step, node: list.elements.count - 1), at: index)
                case 1 where !model.isEmpty:
                    let index = place % model.count
                    let removed = list.remove(at: index)
                    #expect(removed == model.remove(at: index).value)
                case 2 where !model.isEmpty:
                    let index = place % model.count
                    model[index].value += 1_000_000
                    list.modify(at: index) { $0 += 1_000_000 }
                    model[index].node = list.node(at: index)
                case 3 where !model.isEmpty:
                    let index = place % model.count
                    let node = list.node(at: index)
                    #expect(node != nil && node.map { list[$0] } == model[index].value)
                    #expect(model[index].node == nil || model[index].node == node)
                    model[index].node = node
                case 4, 5:
                    // A node moves before another (or to the end), found by node alone.
                    let nodes = model.indices.filter { model[$0].node != nil }
                    guard let moving = nodes.isEmpty ? nil : nodes[place % nodes.count] else { break }
                    let entry = model.remove(at: moving)
                    let (removed, removedAgain) = (list.remove(entry.node!), list.remove(entry.node!))
                    #expect(removed && !removedAgain)
                    let others = model.indices.filter { model[$0].node != nil }
                    if edit % 8 == 4, !others.isEmpty {
                        let before = others[(place / 7) % others.count]
                        let done = list.insert(entry.node!, before: model[before].node)
                        #expect(done)
                        model.insert(entry, at: before)
                    } else {
                        let done = list.insert(entry.node!, before: nil)
                        #expect(done)
                        model.append(entry)
                    }
                case 6:
                    // A new node put before a node, as a keyed insert does.
                    let nodes = model.indices.filter { model[$0].node != nil }
                    let node = list.add(-step)
                    if nodes.isEmpty {
                        let done = list.insert(node, before: nil)
                        #expect(done)
                        model.append(Entry(value: -step, node: node))
                    } else {
                        let before = nodes[place % nodes.count]
                        let done = list.insert(node, before: model[before].node)
                        #expect(done)
                        model.insert(Entry(value: -step, node: node), at: before)
                    }
                case 7:
                    if let index = model.indices.first(where: { model[$0].node != nil }) {
                        model[index].value = step
                        list.replace(model[index].node!, with: step)
                    }
                default:
                    break
                }
            }
            #expect(Array(list) == model.map(\.value))
            #expect(list.count == model.count)
            #expect(list.pieces.reduce(0) { $0 + $1.count } == model.count)
            for entry in model { if let node = entry.node { #expect(list.contains(node) && list[node] == entry.value) } }
        }
    }

    @Test func refusesPlacesThatAreNotThere() {
        var list = ListOverlay<Int>(heldCount: 1_000, nodes: [500], chunkSize: 4) { $0 }
        let (first, second) = (list.insert(-1, at: 500), list.insert(-2, at: 1_001))
        #expect(first && second)
        let array = Array(list)
        #expect(list.count == 1_002 && array[499] == 499 && array[500] == -1 && array[501] == 500 && array[1_001] == -2)
        // Past the end, nothing is read or changed, and the process goes on.
        let (removed, pastEnd, beforeStart) = (list.remove(at: 1_002), list.node(at: 1_002), list.node(at: -1))
        let (farInsert, negativeInsert) = (list.insert(0, at: 1_003), list.insert(0, at: -1))
        let modified = list.modify(at: 1_002) { _ in true }
        #expect(removed == nil && pastEnd == nil && beforeStart == nil && !farInsert && !negativeInsert && modified == nil)
        // A node already in the list is not put again, nor one before a node out of it.
        let added = list.add(7)
        let (again, beforeNothing) = (list.insert(0, before: nil), list.insert(added, before: 999_999))
        let (removedMissing, removedNegative) = (list.remove(999_999), list.remove(-1))
        #expect(!again && !beforeNothing && !removedMissing && !removedNegative)
        #expect(list.count == 1_002 && Array(list).count == 1_002)
    }
}
