import CLibFuzzer
import Glibc
import LiveCollections

struct Item: UniquelyIdentifiable {
    var id: UInt8
    var content: UInt8
    var uniqueID: UInt8 { id }
}

struct Repeated: NonUniquelyIdentifiable {
    var id: UInt8
    var content: UInt8
    var nonUniqueID: UInt8 { id }
}

typealias Shelf = ItemSection<UInt8, UInt8, Item>

/// Reads the input as two collections and checks that every delta the engine makes replays
/// old into new by the contract: flat, non-unique, and sectioned.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let half = bytes.count / 2
    let (first, second) = (Array(bytes[..<half]), Array(bytes[half...]))

    // Flat: ids are the bytes' low 6 bits (so that they repeat across the two sides), content
    // their top 2 bits; the first of each id is kept.
    func unique(_ bytes: [UInt8]) -> [Item] {
        var seen = Set<UInt8>()
        return bytes.map { Item(id: $0 & 0x3F, content: $0 >> 6) }.filter { seen.insert($0.id).inserted }
    }
    let old = unique(first), new = unique(second)
    expectReplay(old, new, try Delta(from: old, to: new).replay(old: old, new: new))

    // Non-unique: repeats matched by occurrence.
    let oldRepeats = NonUniqueDatum.numbering(first.map { Repeated(id: $0 & 0x0F, content: $0 >> 6) })
    let newRepeats = NonUniqueDatum.numbering(second.map { Repeated(id: $0 & 0x0F, content: $0 >> 6) })
    expectReplay(oldRepeats, newRepeats, try Delta(from: oldRepeats, to: newRepeats).replay(old: oldRepeats, new: newRepeats))

    // Sectioned: an item's section is its byte's bits 4-5, sections in the order met.
    func shelves(_ items: [Item], _ bytes: [UInt8]) -> [Shelf] {
        var order = [UInt8]()
        var byID = [UInt8: [Item]]()
        for (item, byte) in zip(items, bytes) {
            let section = (byte >> 4) & 3
            if byID[section] == nil { order.append(section) }
            byID[section, default: []].append(item)
        }
        return order.map { Shelf(id: $0, header: $0 & 1, items: byID[$0]!) }
    }
    let oldShelves = shelves(old, first), newShelves = shelves(new, second)
    let replayed: [ReplayedSection<Shelf, Item>]
    do {
        replayed = try SectionedDelta(from: oldShelves, to: newShelves).replay(old: oldShelves, new: newShelves)
    } catch {
        fatalError("sectioned: \(error)")
    }
    guard replayed.map({ Shelf(id: $0.section.id, header: $0.section.header, items: $0.items) }) == newShelves else {
        fatalError("sectioned replay gives another collection")
    }
    return 0
}

func expectReplay<Element: Equatable>(_ old: [Element], _ new: [Element], _ replay: @autoclosure () throws -> [Element]) {
    do {
        guard try replay() == new else { fatalError("replay gives another collection: \(old) -> \(new)") }
    } catch {
        fatalError("\(error): \(old) -> \(new)")
    }
}

exit(cfuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzz($0, $1) })
