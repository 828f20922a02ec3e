/// What an element of a `ChunkedList` counts for when the list is walked by weight: a run of
/// held items counts for its items, a JSON value for one.
protocol Weighed {
    var weight: Int { get }
}

/// A list kept in chunks of a few hundred elements: an insert or remove at an index moves the
/// elements of one chunk and walks the chunks' counts, not the whole list. A patch of k
/// operations on an array of n elements then costs about k·(n/256 + 256) steps, where an array
/// would move k·n/2 elements, which made a patch of as many operations as elements quadratic.
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

    /// The chunk that holds `index`, and the index's place in it; nil past the end. Each
    /// access answers nil rather than stopping the process where an index is out of range:
    /// the callers check their indices, and one that did not is a logged 500, not a crash.
    private func place(of index: Int) -> (chunk: Int, slot: Int)? {
        guard index >= 0 else { return nil }
        var start = 0
        for (position, chunk) in chunks.enumerated() {
            if index < start + chunk.count { return (position, index - start) }
            start += chunk.count
        }
        return nil
    }

    /// The element at `index`; nil past the end.
    func element(at index: Int) -> Element? {
        place(of: index).map { chunks[$0.chunk][$0.slot] }
    }

    /// Runs `body` on the element at `index` where it stands; nil past the end.
    mutating func modify<T, Failure: Error>(at index: Int, _ body: (inout Element) throws(Failure) -> T) throws(Failure) -> T? {
        guard let (chunk, slot) = place(of: index) else { return nil }
        let before = chunks[chunk][slot].weight
        defer {
            let change = chunks[chunk][slot].weight - before
            weights[chunk] += change
            weight += change
        }
        return try body(&chunks[chunk][slot])
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

    mutating func append(_ element: Element) {
        if chunks.isEmpty || chunks[chunks.count - 1].count >= 2 * chunkSize {
            chunks.append([])
            weights.append(0)
        }
        insert(element, chunk: chunks.count - 1, slot: chunks[chunks.count - 1].count)
    }

    /// Puts `element` at `index` (up to `count`); false, and nothing put, past that.
    @discardableResult
    mutating func insert(_ element: Element, at index: Int) -> Bool {
        if index == count {
            append(element)
            return true
        }
        guard let (chunk, slot) = place(of: index) else { return false }
        insert(element, chunk: chunk, slot: slot)
        return true
    }

    private mutating func insert(_ element: Element, chunk: Int, slot: Int) {
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

    /// Takes out the element at `index`; nil, and nothing taken, past the end.
    @discardableResult
    mutating func remove(at index: Int) -> Element? {
        guard let (chunk, slot) = place(of: index) else { return nil }
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

    /// Puts `elements` where the element at `index` was; false, and nothing changed, past the
    /// end.
    @discardableResult
    mutating func replace(at index: Int, with elements: [Element]) -> Bool {
        guard remove(at: index) != nil else { return false }
        for (offset, element) in elements.enumerated() { insert(element, at: index + offset) }
        return true
    }
}
