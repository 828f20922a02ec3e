import ByteJSON

/// Which top-level fields of an item count for its content (the data-factory idea over HTTP).
package enum ContentFilter: Sendable, Equatable {
    case allFields
    case only(KeySet)
    case except(KeySet)

    /// Whether a member with this key counts.
    @inline(__always)
    func includes(_ key: ScannedString, in scanner: JSONScanner) -> Bool {
        switch self {
        case .allFields: true
        case .only(let keys): keys.contains(key, in: scanner)
        case .except(let keys): !keys.contains(key, in: scanner)
        }
    }
}

/// Member names looked up by the hash the scanner gives each key, so that checking an item's
/// fields costs one lookup a field, however many names there are.
package struct KeySet: Sendable, Equatable {
    /// The names as given, in order.
    package let keys: [[UInt8]]
    private let byHash: [UInt64: [Int]]

    package init(_ keys: [[UInt8]]) {
        self.keys = keys
        var byHash = [UInt64: [Int]]()
        for (index, key) in keys.enumerated() { byHash[Self.hash(key), default: []].append(index) }
        self.byHash = byHash
    }

    /// The hash the scanner gives a string with this text.
    private static func hash(_ key: [UInt8]) -> UInt64 { JSONName(key).hash }

    @inline(__always)
    func contains(_ key: ScannedString, in scanner: JSONScanner) -> Bool {
        guard let candidates = byHash[key.hash] else { return false }
        return candidates.contains { scanner.string(key, equals: keys[$0]) }
    }

    package static func == (lhs: KeySet, rhs: KeySet) -> Bool { lhs.keys == rhs.keys }
}
