/// What an element of a `ChunkedList` counts for when the list is walked by weight: a run of
/// held items counts for its items, a JSON value for one.
protocol Weighed {
    var weight: Int { get }
}

/// A list kept in chunks of a few hundred elements: an insert or remove at an index moves the
/// elements of one chunk and walks the chunks' counts, not the whole list. A patch of k
/// operations on an array of n elements then costs about k·(n/256 + 256) steps, where an array
/// would move k·n/2 elements: 100,000 operations on a 100,000-element section took minutes.
/// Elements are also found by weight (`locate(weight:)`), for lists whose elements stand for
/// runs of items.
struct ChunkedList<Element: Weighed>: Sequence {
    private var chunks: [[Element]] = []
    /// Each chunk's weight, the sum of its elements'.
    private var weights: [Int] = []
    private(set) var count = 0
    /// The sum of the elements' weights.
    private(set) var weight = 0

    /// A chunk past twice this splits in two (small only in tests, to split often).
    private let chunkSize: Int

    init(_ elements: some Sequence<Element>, chunkSize: Int = 256) {
        self.chunkSize = chunkSize
        var chunk: [Element] = []
        for element in elements {
            if chunk.count == chunkSize { appendChunk(&chunk) }
            chunk.append(element)
        }
        appendChunk(&chunk)
    }

    private mutating func appendChunk(_ chunk: inout [Element]) {
        guard !chunk.isEmpty else { return }
        let chunkWeight = chunk.reduce(0) { $0 + $1.weight }
        chunks.append(chunk)
        weights.append(chunkWeight)
        count += chunk.count
        weight += chunkWeight
        chunk = []
        chunk.reserveCapacity(chunkSize)
    }

    var isEmpty: Bool { count == 0 }
    var underestimatedCount: Int { count }

    func makeIterator() -> FlattenSequence<[[Element]]>.Iterator { chunks.joined().makeIterator() }

    /// The chunk that holds `index` (below `count`), and the index's place in it.
    private func place(of index: Int) -> (chunk: Int, slot: Int) {
        var start = 0
        for (position, chunk) in chunks.enumerated() {
            if index < start + chunk.count { return (position, index - start) }
            start += chunk.count
        }
        preconditionFailure("index \(index) is past the list's \(count) elements")
    }

    subscript(index: Int) -> Element {
        get {
            let (chunk, slot) = place(of: index)
            return chunks[chunk][slot]
        }
        _modify {
            let (chunk, slot) = place(of: index)
            let before = chunks[chunk][slot].weight
            yield &chunks[chunk][slot]
            let change = chunks[chunk][slot].weight - before
            weights[chunk] += change
            weight += change
        }
    }

    /// The element whose weight covers `weight` (below the list's weight): its index, and how
    /// far into its weight `weight` falls.
    func locate(weight target: Int) -> (index: Int, offset: Int) {
        var (start, index) = (0, 0)
        for (position, chunkWeight) in weights.enumerated() {
            guard target < start + chunkWeight else {
                start += chunkWeight
                index += chunks[position].count
                continue
            }
            for element in chunks[position] {
                if target < start + element.weight { return (index, target - start) }
                start += element.weight
                index += 1
            }
        }
        return (count, 0)
    }

    mutating func append(_ element: Element) { insert(element, at: count) }

    /// Puts `element` at `index` (up to `count`).
    mutating func insert(_ element: Element, at index: Int) {
        let (chunk, slot): (Int, Int)
        if index == count {
            if chunks.isEmpty || chunks[chunks.count - 1].count >= 2 * chunkSize {
                chunks.append([])
                weights.append(0)
            }
            (chunk, slot) = (chunks.count - 1, chunks[chunks.count - 1].count)
        } else {
            (chunk, slot) = place(of: index)
        }
        chunks[chunk].insert(element, at: slot)
        weights[chunk] += element.weight
        count += 1
        weight += element.weight
        if chunks[chunk].count > 2 * chunkSize {
            let second = Array(chunks[chunk][chunkSize...])
            chunks[chunk].removeSubrange(chunkSize...)
            let secondWeight = second.reduce(0) { $0 + $1.weight }
            weights[chunk] -= secondWeight
            chunks.insert(second, at: chunk + 1)
            weights.insert(secondWeight, at: chunk + 1)
        }
    }

    /// Takes out the element at `index` (below `count`).
    @discardableResult
    mutating func remove(at index: Int) -> Element {
        let (chunk, slot) = place(of: index)
        let element = chunks[chunk].remove(at: slot)
        weights[chunk] -= element.weight
        count -= 1
        weight -= element.weight
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            weights.remove(at: chunk)
        }
        return element
    }

    /// Puts `elements` where the element at `index` (below `count`) was.
    mutating func replace(at index: Int, with elements: [Element]) {
        remove(at: index)
        for (offset, element) in elements.enumerated() { insert(element, at: index + offset) }
    }
}
