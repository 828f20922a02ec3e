/// A flat session's list under a patch: runs of held items that no operation has reached, in
/// their order, and the elements operations have reached, as `LazyJSON`. The segments are kept
/// in chunks (`ChunkedList`), found by the items they stand for, so an operation walks the
/// chunks' counts and one chunk, not every place the patch has reached, nor the list; a held
/// item leaves its run (becomes an element) only when an operation reaches it.
struct PatchedList {
    enum Segment: Weighed {
        /// Held items, in their order.
        case held(Range<Int>)
        case element(LazyJSON)

        var count: Int {
            switch self {
            case .held(let run): run.count
            case .element: 1
            }
        }

        var weight: Int { count }
    }

    let held: [JSONItem]
    private(set) var segments: ChunkedList<Segment>
    private(set) var count: Int
    /// The held items taken out of their runs, by where their text starts: an element that is
    /// still such a text is that held item, wherever the patch put it.
    private var isolated: [UnsafePointer<UInt8>: Int] = [:]

    init(_ held: [JSONItem]) {
        self.held = held
        segments = ChunkedList(held.isEmpty ? [] : [.held(held.indices)])
        count = held.count
    }

    /// The held item whose very text `text` is, if an operation took it out of its run.
    func heldIndex(of text: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let start = text.baseAddress, let index = isolated[start], held[index].text.count == text.count else { return nil }
        return index
    }

    /// A place the patch checked that the segments do not hold: a fault in this code, answered
    /// as a logged 500 rather than a crash.
    private static var lost: APIError { .internalError("a patched list lost track of its places") }

    /// The element at `index` (below `count`).
    mutating func element(at index: Int) throws(APIError) -> LazyJSON {
        // Isolated first: `segments` read in the same expression would be the list before it.
        let segment = try isolate(index)
        guard case .element(let value) = segments.element(at: segment) else { throw Self.lost }
        return value
    }

    /// Runs `body` on the element at `index` (below `count`).
    mutating func update<T>(at index: Int, _ body: (inout LazyJSON) throws(APIError) -> T) throws(APIError) -> T {
        let segment = try isolate(index)
        let found: T?? = try segments.modify(at: segment) { segment throws(APIError) in
            guard case .element(var value) = segment else { return nil }
            // Out of the list while `body` runs (an empty run stands in), so that changing it
            // copies nothing.
            segment = .held(0..<0)
            defer { segment = .element(value) }
            return try body(&value)
        }
        guard let found, let result = found else { throw Self.lost }
        return result
    }

    /// Takes out the element at `index` (below `count`).
    mutating func remove(at index: Int) throws(APIError) -> LazyJSON {
        let segment = try isolate(index)
        guard case .element(let value) = segments.remove(at: segment) else { throw Self.lost }
        count -= 1
        return value
    }

    /// Puts `value` at `index` (up to `count`).
    mutating func insert(_ value: LazyJSON, at index: Int) throws(APIError) {
        guard index < count else {
            segments.append(.element(value))
            count += 1
            return
        }
        let (segment, offset) = segments.locate(weight: index)
        var placed: Bool
        if offset > 0, case .held(let run) = segments.element(at: segment) {
            let split = run.lowerBound + offset
            placed = segments.replace(at: segment, with: [.held(run.lowerBound..<split), .element(value), .held(split..<run.upperBound)])
        } else {
            placed = segments.insert(.element(value), at: segment)
        }
        guard placed else { throw Self.lost }
        count += 1
    }

    /// The whole list as one `LazyJSON` array, for a patch that goes on to work on the root.
    var opened: LazyJSON {
        var elements: [LazyJSON] = []
        elements.reserveCapacity(count)
        for segment in segments {
            switch segment {
            case .held(let run): for index in run { elements.append(.text(held[index].text)) }
            case .element(let value): elements.append(value)
            }
        }
        return .array(ChunkedList(elements))
    }

    /// Makes the item at `index` an element of its own; answers its segment.
    private mutating func isolate(_ index: Int) throws(APIError) -> Int {
        let (segment, offset) = segments.locate(weight: index)
        guard let found = segments.element(at: segment) else { throw Self.lost }
        guard case .held(let run) = found else { return segment }
        let item = run.lowerBound + offset
        if let start = held[item].text.baseAddress { isolated[start] = item }
        var parts: [Segment] = []
        if offset > 0 { parts.append(.held(run.lowerBound..<item)) }
        parts.append(.element(.text(held[item].text)))
        if item + 1 < run.upperBound { parts.append(.held(item + 1..<run.upperBound)) }
        guard segments.replace(at: segment, with: parts) else { throw Self.lost }
        return segment + (offset > 0 ? 1 : 0)
    }
}
