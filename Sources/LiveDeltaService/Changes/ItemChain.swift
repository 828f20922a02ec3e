/// A list under edits that costs the edits, not the list: the items as they were stay where they
/// are, and only the links the edits changed are kept (a doubly linked list whose untouched
/// links are implied: item i follows item i − 1). Nodes are the old items' indices, then the
/// added items' (`base.count + k`).
struct ItemChain<Element> {
    let base: [Element]
    private(set) var added: [Element] = []
    private var nextOf: [Int: Int] = [:]
    private var previousOf: [Int: Int] = [:]
    /// New content of old items, by node.
    private var replaced: [Int: Element] = [:]
    private(set) var count: Int

    static var head: Int { -1 }
    static var tail: Int { -2 }

    init(_ base: [Element]) {
        self.base = base
        count = base.count
    }

    func element(_ node: Int) -> Element {
        node >= base.count ? added[node - base.count] : replaced[node] ?? base[node]
    }

    private func next(_ node: Int) -> Int {
        if let link = nextOf[node] { return link }
        if node == Self.head { return base.isEmpty ? Self.tail : 0 }
        return node + 1 < base.count ? node + 1 : Self.tail
    }

    private func previous(_ node: Int) -> Int {
        if let link = previousOf[node] { return link }
        if node == Self.tail { return base.isEmpty ? Self.head : base.count - 1 }
        return node == 0 ? Self.head : node - 1
    }

    /// A node for a new element, not yet in the list.
    mutating func add(_ element: Element) -> Int {
        added.append(element)
        return base.count + added.count - 1
    }

    mutating func replace(_ node: Int, with element: Element) {
        if node >= base.count { added[node - base.count] = element } else { replaced[node] = element }
    }

    /// Takes a node out of the list (it must be in it).
    mutating func unlink(_ node: Int) {
        let (before, after) = (previous(node), next(node))
        nextOf[before] = after
        previousOf[after] = before
        count -= 1
    }

    /// Puts a node that is not in the list right before `successor` (`tail`: at the end).
    mutating func link(_ node: Int, before successor: Int) {
        let before = previous(successor)
        nextOf[before] = node
        previousOf[node] = before
        nextOf[node] = successor
        previousOf[successor] = node
        count += 1
    }

    /// The list now, and where each of `nodes` (all in the list) stands in it. Runs of old items
    /// whose links no edit changed are copied whole.
    func materialize(finding nodes: [Int]) -> (elements: [Element], positions: [Int: Int]) {
        // Old items whose next link an edit set: a run of untouched links ends at each.
        let breaks = nextOf.keys.filter { $0 >= 0 && $0 < base.count }.sorted()
        let contentBreaks = replaced.keys.sorted()
        let wanted = Set(nodes)
        let wantedOld = nodes.filter { $0 < base.count }.sorted()
        var elements: [Element] = []
        elements.reserveCapacity(count)
        var positions: [Int: Int] = [:]
        var node = next(Self.head)
        while node != Self.tail {
            if node >= base.count {
                if wanted.contains(node) { positions[node] = elements.count }
                elements.append(added[node - base.count])
                node = next(node)
                continue
            }
            let end = min(breaks.first(atLeast: node) ?? base.count - 1, base.count - 1)
            let start = elements.count
            elements.append(contentsOf: base[node...end])
            for changed in contentBreaks.all(in: node...end) { elements[start + changed - node] = replaced[changed] ?? base[changed] }
            for found in wantedOld.all(in: node...end) { positions[found] = start + found - node }
            node = next(end)
        }
        return (elements, positions)
    }
}

extension Array where Element == Int {
    /// The first element at least `value` (the array is sorted).
    fileprivate func first(atLeast value: Int) -> Int? {
        let index = lowerBound(value)
        return index < count ? self[index] : nil
    }

    /// The elements in `range` (the array is sorted).
    fileprivate func all(in range: ClosedRange<Int>) -> ArraySlice<Int> {
        self[lowerBound(range.lowerBound)..<lowerBound(range.upperBound + 1)]
    }

    private func lowerBound(_ value: Int) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
