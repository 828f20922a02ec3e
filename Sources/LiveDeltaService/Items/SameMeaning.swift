import ByteJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Which top-level members of an object count when two values are compared.
enum CountedMembers {
    /// An item's content: the fields its filter keeps.
    case fields(ContentFilter)
    /// A section's own content: all but its items.
    case allBut([UInt8])

    func includes(_ key: ScannedString, in scanner: JSONScanner) -> Bool {
        switch self {
        case .fields(let filter): filter.includes(key, in: scanner)
        case .allBut(let excluded): !scanner.string(key, equals: excluded)
        }
    }
}

/// Whether two byte strings are equal.
@inline(__always)
func sameBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
}

/// Whether two valid JSON texts mean the same, counting only the top-level members `counted`
/// names when they are objects: equal bytes do at once; otherwise (the slow path behind a
/// hash match) the values are compared as trees.
func sameMeaning(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, counting counted: CountedMembers) -> Bool {
    if sameBytes(a, b) { return true }
    func tree(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue? {
        // Both texts were read under the request's depth limit, which is at most 1,000.
        var scanner = JSONScanner(bytes, maxDepth: 1_000)
        let reader = scanner
        return try? scanner.buildValue(keeping: { counted.includes($0, in: reader) })
    }
    guard let first = tree(a), let second = tree(b) else { return false }
    return first == second
}

/// Numbers items by occurrence of their ids, counting on from `seen` (which it updates): the
/// k-th occurrence of an id in a collection is the same item as the k-th in another.
func numberOccurrences(_ items: inout [JSONItem], seen: inout [JSONItemID: UInt32]) {
    for index in items.indices {
        let id = items[index].plainID
        let occurrence = seen[id, default: 0] + 1
        seen[id] = occurrence
        items[index].occurrence = occurrence
    }
}
