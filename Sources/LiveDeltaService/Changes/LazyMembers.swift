/// An object's members under a patch, in their order, found by name through a table: a patch of
/// k operations on an object of m members costs k lookups, where a walk of the names for each
/// would cost k·m, quadratic for a patch naming each of an item's members. A removed
/// member leaves an empty slot, so that the others keep their places.
struct LazyMembers: Sequence {
    typealias Member = (name: [UInt8], value: LazyJSON)

    private var slots: [Member?] = []
    private var positions: [[UInt8]: Int] = [:]

    init(_ members: [Member] = []) {
        for member in members { append(member.name, member.value) }
    }

    var count: Int { positions.count }

    func makeIterator() -> IndexingIterator<[Member]> { slots.compactMap { $0 }.makeIterator() }

    subscript(name: [UInt8]) -> LazyJSON? { positions[name].flatMap { slots[$0]?.value } }

    /// Puts a member at the end, in place of any of that name: the last of repeated names wins,
    /// where it stands.
    mutating func append(_ name: [UInt8], _ value: LazyJSON) {
        if let old = positions[name] { slots[old] = nil }
        positions[name] = slots.count
        slots.append((name, value))
    }

    /// Gives the member `name` the value `value`, where it stands, or at the end where there
    /// is none (RFC 6902 `add`).
    mutating func set(_ value: LazyJSON, for name: [UInt8]) {
        guard let position = positions[name] else { return append(name, value) }
        slots[position]?.value = value
    }

    /// Takes out the member `name`, answering its value; nil where there is none.
    mutating func remove(_ name: [UInt8]) -> LazyJSON? {
        guard let position = positions.removeValue(forKey: name) else { return nil }
        defer { slots[position] = nil }
        return slots[position]?.value
    }

    /// Runs `body` on the value of the member `name` where it stands; nil where there is none.
    mutating func modify<T, Failure: Error>(_ name: [UInt8], _ body: (inout LazyJSON) throws(Failure) -> T) throws(Failure) -> T? {
        guard let position = positions[name], var member = slots[position] else { return nil }
        // Out of its slot while `body` runs, so that changing it copies nothing.
        slots[position] = nil
        defer { slots[position] = member }
        return try body(&member.value)
    }
}
