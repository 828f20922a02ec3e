import PropertyBased
import Testing

@testable import LiveDeltaService

/// A `ChunkedList` must read as the array the same inserts, removes and writes leave, through
/// chunk splits and emptied chunks, and find each element by weight.
@Suite struct ChunkedListTests {
    /// An element that weighs what it says (0 included, as a patch's emptied run does).
    struct Run: Weighed, Equatable {
        var weight: Int
        var tag: Int
    }

    @Test func followsAnArrayThroughInsertsRemovesAndWrites() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...90), Gen.int(in: 0...1_000_000).array(of: 1...400), Gen.int(in: 1...8)) {
            start, edits, chunkSize in
            var model = (0..<start).map { Run(weight: $0 % 4, tag: $0) }
            var list = ChunkedList(model, chunkSize: chunkSize)
            for (step, edit) in edits.enumerated() {
                let place = edit / 4
                switch edit % 4 {
                case 0, 1:
                    let run = Run(weight: step % 5, tag: -step)
                    let index = place % (model.count + 1)
                    model.insert(run, at: index)
                    list.insert(run, at: index)
                case 2 where !model.isEmpty:
                    let index = place % model.count
                    #expect(list.remove(at: index) == model.remove(at: index))
                case 3 where !model.isEmpty:
                    let index = place % model.count
                    model[index].weight += 1
                    list.modify(at: index) { $0.weight += 1 }
                default:
                    break
                }
            }
            #expect(Array(list) == model)
            #expect(list.count == model.count)
            let total = model.reduce(0) { $0 + $1.weight }
            #expect(list.weight == total)
            // Every weight falls in the element that covers it.
            var covered = 0
            for (index, run) in model.enumerated() {
                for offset in 0..<run.weight {
                    let found = list.locate(weight: covered + offset)
                    #expect(found.index == index && found.offset == offset)
                }
                covered += run.weight
                if !model.isEmpty { #expect(list.element(at: index) == run) }
            }
            #expect(list.locate(weight: total) == (model.count, 0))
        }
    }

    @Test func replacingOneElementWithSeveralKeepsTheOrder() {
        var list = ChunkedList((0..<1_000).map { Run(weight: 1, tag: $0) }, chunkSize: 4)
        list.replace(at: 500, with: [Run(weight: 2, tag: -1), Run(weight: 0, tag: -2), Run(weight: 3, tag: -3)])
        #expect(list.count == 1_002 && list.weight == 1_004)
        #expect(list.element(at: 499)?.tag == 499 && list.element(at: 500)?.tag == -1)
        #expect(list.element(at: 502)?.tag == -3 && list.element(at: 503)?.tag == 501)
        #expect(list.locate(weight: 501).index == 500 && list.locate(weight: 502).index == 502)
        // Past the end, nothing is read or changed, and the process goes on.
        #expect(list.element(at: 1_002) == nil && list.element(at: -1) == nil && list.remove(at: 1_002) == nil)
        #expect(!list.insert(Run(weight: 1, tag: 0), at: 1_003) && !list.replace(at: 1_002, with: []))
        #expect(list.modify(at: 1_002) { _ in true } == nil)
        #expect(list.count == 1_002 && list.weight == 1_004)
    }
}
