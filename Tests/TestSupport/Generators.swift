import LiveCollections
import PropertyBased

/// An item whose identity is `id` and whose content is `content`.
public struct Thing: UniquelyIdentifiable, Sendable, CustomStringConvertible {
    public var id: Int
    public var content: Int
    public init(id: Int, content: Int = 0) {
        self.id = id
        self.content = content
    }
    public var uniqueID: Int { id }
    public var description: String { "\(id):\(content)" }
}

/// A value whose id may repeat.
public struct Dupe: NonUniquelyIdentifiable, Sendable, CustomStringConvertible {
    public var id: Int
    public var content: Int
    public init(id: Int, content: Int = 0) {
        self.id = id
        self.content = content
    }
    public var nonUniqueID: Int { id }
    public var description: String { "\(id):\(content)" }
}

public typealias Shelf = ItemSection<Int, Int, Thing>

/// Keeps the first occurrence of every element.
public func firstOccurrences(_ values: [Int]) -> [Int] {
    var seen = Set<Int>()
    return values.filter { seen.insert($0).inserted }
}

/// Length of a longest strictly increasing subsequence, by the quadratic textbook DP, so that
/// it shares nothing with the engine's algorithm.
public func lisLength(_ values: [Int]) -> Int {
    var best = [Int](repeating: 1, count: values.count)
    for i in values.indices {
        for j in 0..<i where values[j] < values[i] { best[i] = max(best[i], best[j] + 1) }
    }
    return best.max() ?? 0
}

/// The fewest moves from `old` to `new` for unique ids: kept items minus a longest run of
/// kept items already in order.
public func minimumMoves(old: [Int], new: [Int]) -> Int {
    let newIndex = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($0.element, $0.offset) })
    let kept = old.compactMap { newIndex[$0] }
    return kept.count - lisLength(kept)
}

/// How a generated pair of collections relates.
public enum Shape: Int, CaseIterable, Sendable {
    case random, reversed, allNew, allDeleted, fromEmpty, sameIDs
}

/// Two flat collections of unique ids in a chosen shape, with contents that may change.
public struct FlatCase: Sendable, CustomStringConvertible {
    public var old: [Thing]
    public var new: [Thing]
    public var description: String { "old \(old)\nnew \(new)" }

    public init(shape: Shape, oldIDs: [Int], newIDs: [Int], oldContents: [Int], newContents: [Int]) {
        let oldIDs = firstOccurrences(oldIDs)
        var newIDs = firstOccurrences(newIDs)
        switch shape {
        case .random: break
        case .reversed: newIDs = oldIDs.reversed()
        case .allNew: newIDs = newIDs.map { $0 + 1_000 }
        case .allDeleted: newIDs = []
        case .fromEmpty: newIDs = oldIDs
        case .sameIDs: newIDs = oldIDs.shuffledDeterministically(by: newContents)
        }
        let oldThings = oldIDs.enumerated().map { Thing(id: $1, content: oldContents[$0 % oldContents.count]) }
        new = newIDs.enumerated().map { Thing(id: $1, content: newContents[$0 % newContents.count]) }
        old = shape == .fromEmpty ? [] : oldThings
    }
}

extension Array {
    /// A permutation driven by `keys`, so that shrinking stays meaningful.
    public func shuffledDeterministically(by keys: [Int]) -> [Element] {
        guard !keys.isEmpty else { return self }
        return enumerated().sorted { (keys[$0.offset % keys.count], $0.offset) < (keys[$1.offset % keys.count], $1.offset) }
            .map(\.element)
    }
}

public enum Gens {
    public static let ids = Gen.int(in: 0...40).array(of: 0...40)
    public static let contents = Gen.int(in: 0...3).array(of: 1...40)

    public static let flatCase = zip(Gen<Shape>.case, ids, ids, contents, contents).map {
        FlatCase(shape: $0, oldIDs: $1, newIDs: $2, oldContents: $3, newContents: $4)
    }

    /// Sections with ids 0...7 (some empty), items with ids 0...40 spread among them.
    public static let shelves = zip(
        Gen.int(in: 0...7).array(of: 0...8), Gen.int(in: 0...40).array(of: 0...40),
        Gen.int(in: 0...9).array(of: 1...40), Gen.int(in: 0...2).array(of: 1...40)
    ).map { sectionIDs, itemIDs, placement, contents -> [Shelf] in
        makeShelves(sectionIDs: sectionIDs, itemIDs: itemIDs, placement: placement, contents: contents)
    }

    public static let dupes = zip(Gen.int(in: 0...4).array(of: 0...30), Gen.int(in: 0...1).array(of: 1...30)).map {
        ids, contents in ids.enumerated().map { Dupe(id: $1, content: contents[$0 % contents.count]) }
    }
}

public func makeShelves(sectionIDs: [Int], itemIDs: [Int], placement: [Int], contents: [Int]) -> [Shelf] {
    let sectionIDs = firstOccurrences(sectionIDs)
    guard !sectionIDs.isEmpty else { return [] }
    var shelves = sectionIDs.map { Shelf(id: $0, header: contents[$0 % contents.count], items: []) }
    for (k, id) in firstOccurrences(itemIDs).enumerated() {
        let section = placement[k % placement.count] % shelves.count
        shelves[section].items.append(Thing(id: id, content: contents[(k + id) % contents.count]))
    }
    return shelves
}

/// The fewest item moves for a sectioned change, computed from ids alone: items that change
/// section, plus, per section, the staying items outside a longest run already in order.
public func minimumItemMoves(old: [Shelf], new: [Shelf]) -> Int {
    let surviving = Set(old.map(\.id)).intersection(new.map(\.id))
    var newPlace = [Int: (section: Int, row: Int)]()
    for section in new where surviving.contains(section.id) {
        for (row, item) in section.items.enumerated() { newPlace[item.id] = (section.id, row) }
    }
    var moves = 0
    for section in old where surviving.contains(section.id) {
        var staying = [Int]()
        for item in section.items {
            guard let place = newPlace[item.id] else { continue }
            if place.section == section.id { staying.append(place.row) } else { moves += 1 }
        }
        moves += staying.count - lisLength(staying)
    }
    return moves
}
