import LiveCollections
import PropertyBased

/// An item whose identity is `id` and whose content is `content`.
struct Thing: UniquelyIdentifiable, Sendable, CustomStringConvertible {
    var id: Int
    var content: Int = 0
    var uniqueID: Int { id }
    var description: String { "\(id):\(content)" }
}

/// A value whose id may repeat.
struct Dupe: NonUniquelyIdentifiable, Sendable, CustomStringConvertible {
    var id: Int
    var content: Int = 0
    var nonUniqueID: Int { id }
    var description: String { "\(id):\(content)" }
}

typealias Shelf = ItemSection<Int, Int, Thing>

/// Keeps the first occurrence of every element.
func firstOccurrences(_ values: [Int]) -> [Int] {
    var seen = Set<Int>()
    return values.filter { seen.insert($0).inserted }
}

/// Length of a longest strictly increasing subsequence, by the quadratic textbook DP, so that
/// it shares nothing with the engine's algorithm.
func lisLength(_ values: [Int]) -> Int {
    var best = [Int](repeating: 1, count: values.count)
    for i in values.indices {
        for j in 0..<i where values[j] < values[i] { best[i] = max(best[i], best[j] + 1) }
    }
    return best.max() ?? 0
}

/// The fewest moves from `old` to `new` for unique ids: kept items minus a longest run of
/// kept items already in order.
func minimumMoves(old: [Int], new: [Int]) -> Int {
    let newIndex = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($0.element, $0.offset) })
    let kept = old.compactMap { newIndex[$0] }
    return kept.count - lisLength(kept)
}

/// How a generated pair of collections relates.
enum Shape: Int, CaseIterable, Sendable {
    case random, reversed, allNew, allDeleted, fromEmpty, sameIDs
}

/// Two flat collections of unique ids in a chosen shape, with contents that may change.
struct FlatCase: Sendable, CustomStringConvertible {
    var old: [Thing]
    var new: [Thing]
    var description: String { "old \(old)\nnew \(new)" }

    init(shape: Shape, oldIDs: [Int], newIDs: [Int], oldContents: [Int], newContents: [Int]) {
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
    func shuffledDeterministically(by keys: [Int]) -> [Element] {
        guard !keys.isEmpty else { return self }
        return enumerated().sorted { (keys[$0.offset % keys.count], $0.offset) < (keys[$1.offset % keys.count], $1.offset) }
            .map(\.element)
    }
}

enum Gens {
    static let ids = Gen.int(in: 0...40).array(of: 0...40)
    static let contents = Gen.int(in: 0...3).array(of: 1...40)

    static let flatCase = zip(Gen<Shape>.case, ids, ids, contents, contents).map {
        FlatCase(shape: $0, oldIDs: $1, newIDs: $2, oldContents: $3, newContents: $4)
    }

    /// Sections with ids 0...7 (some empty), items with ids 0...40 spread among them.
    static let shelves = zip(
        Gen.int(in: 0...7).array(of: 0...8), Gen.int(in: 0...40).array(of: 0...40),
        Gen.int(in: 0...9).array(of: 1...40), Gen.int(in: 0...2).array(of: 1...40)
    ).map { sectionIDs, itemIDs, placement, contents -> [Shelf] in
        makeShelves(sectionIDs: sectionIDs, itemIDs: itemIDs, placement: placement, contents: contents)
    }

    static let dupes = zip(Gen.int(in: 0...4).array(of: 0...30), Gen.int(in: 0...1).array(of: 1...30)).map {
        ids, contents in ids.enumerated().map { Dupe(id: $1, content: contents[$0 % contents.count]) }
    }
}

func makeShelves(sectionIDs: [Int], itemIDs: [Int], placement: [Int], contents: [Int]) -> [Shelf] {
    let sectionIDs = firstOccurrences(sectionIDs)
    guard !sectionIDs.isEmpty else { return [] }
    var shelves = sectionIDs.map { Shelf(id: $0, header: contents[$0 % contents.count], items: []) }
    for (k, id) in firstOccurrences(itemIDs).enumerated() {
        let section = placement[k % placement.count] % shelves.count
        shelves[section].items.append(Thing(id: id, content: contents[(k + id) % contents.count]))
    }
    return shelves
}
