/// A list under edits that costs the edits, not the list: every edit of a list (a keyed edit's
/// flat list, its list of sections and each reached section's items; a patch's flat list and
/// every array inside a patched document) works on one. The held items stay where they are, as
/// runs of their indices; an item an edit reaches becomes a **node** (an index into `elements`)
/// that keeps its identity while it moves. The runs and nodes lie in chunks of a few hundred,
/// so an edit costs one chunk and, where it gives a position, a walk of the chunks' counts:
///
/// - by node (a keyed edit, which finds its items by identity): `insert(_:before:)`,
///   `remove(_:)`, `replace(_:with:)`, each in the node's chunk only;
/// - by position (a JSON Patch): `node(at:)`, `insert(_:at:)`, `remove(at:)`.
///
/// A patch of k operations on n items costs about k·(n/256 + 256) steps, where an array would
/// move k·n/2 elements.
struct ListOverlay<Element>: Sequence {
    /// A place in the list: held items, in their order, or one node.
    enum Piece {
        case held(Range<Int>)
        case node(Int)

        var count: Int {
            switch self {
            case .held(let run): run.count
            case .node: 1
            }
        }
    }

    private struct Chunk {
        var pieces: [Piece] = []
        /// The items its pieces stand for.
        var count = 0
    }

    /// The nodes' elements, by node; a removed node's stays, unused.
    private(set) var elements: [Element] = []
    /// Chunks by a number that never changes, so that a node can name its chunk.
    private var chunks: [Chunk] = []
    /// The chunks' numbers in list order.
    private var order: [Int] = []
    /// Each node's chunk; -1 while the node is out of the list.
    private var chunkOf: [Int] = []
    /// A held item as an element, for a node made of it, or for reading it.
    private let heldElement: ((Int) -> Element)?
    /// The held items (their indices) that edits by position made nodes, in the order they did.
    private(set) var madeNodes: [Int] = []
    private(set) var count = 0
    /// A chunk past twice this splits in two (small only in tests, to split often).
    private let chunkSize: Int

    /// The held items `0..<heldCount`, where those at `rows` (ascending, each below
    /// `heldCount`) are nodes from the start, node i for `rows[i]`: a keyed edit knows every
    /// item it names before it runs. `heldElement` gives a held item as an element.
    init(heldCount: Int, nodes rows: [Int] = [], chunkSize: Int = 256, heldElement: @escaping (Int) -> Element) {
        self.heldElement = heldElement
        self.chunkSize = chunkSize
        elements.reserveCapacity(rows.count)
        var pieces: [Piece] = []
        var next = 0
        for row in rows {
            if next < row { pieces.append(.held(next..<row)) }
            pieces.append(.node(add(heldElement(row))))
            next = row + 1
        }
        if next < heldCount { pieces.append(.held(next..<heldCount)) }
        fill(pieces)
    }

    /// A list of `elements`, each a node (node i for the i-th).
    init(_ elements: some Sequence<Element>, chunkSize: Int = 256) {
        heldElement = nil
        self.chunkSize = chunkSize
        self.elements = Array(elements)
        fill(self.elements.indices.map { .node($0) })
    }

    private mutating func fill(_ pieces: [Piece]) {
        chunkOf = [Int](repeating: -1, count: elements.count)
        var start = 0
        while start < pieces.count {
            let end = Swift.min(start + chunkSize, pieces.count)
            let chunk = Chunk(pieces: Array(pieces[start..<end]), count: pieces[start..<end].reduce(0) { $0 + $1.count })
            for case .node(let node) in chunk.pieces { chunkOf[node] = chunks.count }
            order.append(chunks.count)
            chunks.append(chunk)
            count += chunk.count
            start = end
        }
    }

    var isEmpty: Bool { count == 0 }
    var underestimatedCount: Int { count }

    /// The pieces in list order.
    var pieces: some Sequence<Piece> { order.lazy.flatMap { chunks[$0].pieces } }

    // MARK: - By node

    /// A node for `element`, not yet in the list.
    mutating func add(_ element: Element) -> Int {
        elements.append(element)
        chunkOf.append(-1)
        return elements.count - 1
    }

    subscript(node: Int) -> Element { elements[node] }

    mutating func replace(_ node: Int, with element: Element) { elements[node] = element }

    /// Whether `node` is in the list.
    func contains(_ node: Int) -> Bool { node >= 0 && node < chunkOf.count && chunkOf[node] >= 0 }

    /// Puts a node that is out of the list right before `successor` (nil: at the end); false,
    /// and nothing put, where `node` is in the list or `successor` is not.
    @discardableResult
    mutating func insert(_ node: Int, before successor: Int?) -> Bool {
        guard node >= 0 && node < chunkOf.count && chunkOf[node] < 0 else { return false }
        guard let successor else {
            if order.isEmpty { appendChunk(after: nil) }
            let chunk = order[order.count - 1]
            put(.node(node), chunk: chunk, slot: chunks[chunk].pieces.count)
            return true
        }
        guard let (chunk, slot) = slot(of: successor) else { return false }
        put(.node(node), chunk: chunk, slot: slot)
        return true
    }

    /// Takes a node out of the list; false where it is not in it.
    @discardableResult
    mutating func remove(_ node: Int) -> Bool {
        guard let (chunk, slot) = slot(of: node) else { return false }
        take(chunk: chunk, slot: slot)
        return true
    }

    /// The chunk and slot of a node in the list.
    private func slot(of node: Int) -> (chunk: Int, slot: Int)? {
        guard contains(node) else { return nil }
        let chunk = chunkOf[node]
        return chunks[chunk].pieces.withUnsafeBufferPointer { pieces in
            for slot in pieces.indices { if case .node(node) = pieces[slot] { return (chunk, slot) } }
            return nil
        }
    }

    // MARK: - By position

    /// The node at `index`, a held item there made one; nil past the end.
    mutating func node(at index: Int) -> Int? {
        guard let (chunk, slot, offset) = locate(index) else { return nil }
        switch chunks[chunk].pieces[slot] {
        case .node(let node): return node
        case .held(let run):
            guard let heldElement else { return nil }
            let row = run.lowerBound + offset
            let node = add(heldElement(row))
            madeNodes.append(row)
            var parts: [Piece] = []
            if offset > 0 { parts.append(.held(run.lowerBound..<row)) }
            parts.append(.node(node))
            if row + 1 < run.upperBound { parts.append(.held(row + 1..<run.upperBound)) }
            splice(parts, chunk: chunk, slots: slot..<slot + 1)
            return node
        }
    }

    /// Runs `body` on the element at `index` where it stands; nil past the end.
    mutating func modify<T, Failure: Error>(at index: Int, _ body: (inout Element) throws(Failure) -> T) throws(Failure) -> T? {
        guard let node = node(at: index) else { return nil }
        return try body(&elements[node])
    }

    /// Takes out the element at `index`; nil, and nothing taken, past the end.
    @discardableResult
    mutating func remove(at index: Int) -> Element? {
        guard let node = node(at: index), remove(node) else { return nil }
        return elements[node]
    }

    /// Puts `element` at `index` (up to `count`); false, and nothing put, past that.
    @discardableResult
    mutating func insert(_ element: Element, at index: Int) -> Bool {
        guard index >= 0 && index <= count else { return false }
        let node = add(element)
        guard let (chunk, slot, offset) = locate(index) else { return insert(node, before: nil) }
        guard offset > 0, case .held(let run) = chunks[chunk].pieces[slot] else {
            put(.node(node), chunk: chunk, slot: slot)
            return true
        }
        let split = run.lowerBound + offset
        splice([.held(run.lowerBound..<split), .node(node), .held(split..<run.upperBound)], chunk: chunk, slots: slot..<slot + 1)
        return true
    }

    /// The chunk, slot and offset in its piece of the item at `index`; nil past the end.
    private func locate(_ index: Int) -> (chunk: Int, slot: Int, offset: Int)? {
        guard index >= 0 && index < count else { return nil }
        var start = 0
        for chunk in order {
            guard index < start + chunks[chunk].count else {
                start += chunks[chunk].count
                continue
            }
            for (slot, piece) in chunks[chunk].pieces.enumerated() {
                if index < start + piece.count { return (chunk, slot, index - start) }
                start += piece.count
            }
        }
        return nil
    }

    // MARK: - Chunks

    private mutating func put(_ piece: Piece, chunk: Int, slot: Int) {
        splice([piece], chunk: chunk, slots: slot..<slot)
    }

    /// Puts `parts` where the pieces at `slots` were (a run split around a place an edit
    /// reached, or nothing, where one piece is put); a chunk grown past twice its size splits.
    private mutating func splice(_ parts: [Piece], chunk: Int, slots: Range<Int>) {
        let change = parts.reduce(0) { $0 + $1.count } - chunks[chunk].pieces[slots].reduce(0) { $0 + $1.count }
        chunks[chunk].pieces.replaceSubrange(slots, with: parts)
        chunks[chunk].count += change
        count += change
        for case .node(let node) in parts { chunkOf[node] = chunk }
        guard chunks[chunk].pieces.count > 2 * chunkSize else { return }
        let second = appendChunk(after: chunk)
        chunks[second].pieces = Array(chunks[chunk].pieces[chunkSize...])
        chunks[chunk].pieces.removeSubrange(chunkSize...)
        let moved = chunks[second].pieces.reduce(0) { $0 + $1.count }
        chunks[second].count = moved
        chunks[chunk].count -= moved
        for case .node(let node) in chunks[second].pieces { chunkOf[node] = second }
    }

    private mutating func take(chunk: Int, slot: Int) {
        let piece = chunks[chunk].pieces.remove(at: slot)
        chunks[chunk].count -= piece.count
        count -= piece.count
        if case .node(let node) = piece { chunkOf[node] = -1 }
        if chunks[chunk].pieces.isEmpty, let place = order.firstIndex(of: chunk) { order.remove(at: place) }
    }

    /// A new, empty chunk right after `chunk` in the order (nil: at the end).
    @discardableResult
    private mutating func appendChunk(after chunk: Int?) -> Int {
        let number = chunks.count
        chunks.append(Chunk())
        let place = chunk.flatMap { order.firstIndex(of: $0) }.map { $0 + 1 } ?? order.count
        order.insert(number, at: place)
        return number
    }

    // MARK: - Reading

    func makeIterator() -> Iterator { Iterator(list: self) }

    /// The elements in order, held items given as elements as they are read.
    struct Iterator: IteratorProtocol {
        private let list: ListOverlay
        /// The chunk being read (its place in the order), its pieces, and where in them.
        private var chunk = -1
        private var pieces: [Piece] = []
        private var slot = 0
        private var offset = 0

        init(list: ListOverlay) { self.list = list }

        mutating func next() -> Element? {
            while true {
                guard slot < pieces.count else {
                    chunk += 1
                    guard chunk < list.order.count else { return nil }
                    (pieces, slot) = (list.chunks[list.order[chunk]].pieces, 0)
                    continue
                }
                switch pieces[slot] {
                case .node(let node):
                    slot += 1
                    return list.elements[node]
                case .held(let run):
                    guard offset < run.count, let heldElement = list.heldElement else {
                        (slot, offset) = (slot + 1, 0)
                        continue
                    }
                    offset += 1
                    return heldElement(run.lowerBound + offset - 1)
                }
            }
        }
    }
}
