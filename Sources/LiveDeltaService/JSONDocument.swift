import ByteJSON
import Logging
import MicroHTTP
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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

/// The bytes that items point into: a request body, and canonical ids that are not spelled
/// verbatim in it. It lives as long as any item read from it.
// @unchecked Sendable: the two buffers belong to `owners`, which this object keeps alive; they
// are written once before it exists and only read while it does.
package final class JSONDocument: @unchecked Sendable {  // read-only after init; see above
    let body: UnsafeBufferPointer<UInt8>
    let arena: UnsafeBufferPointer<UInt8>
    private let owners: (body: ByteBuffer, arena: ByteBuffer)
    /// How items of this document compare their content.
    let filter: ContentFilter
    /// The member of a section that holds its items (not part of the section's own content).
    let itemsKey: [UInt8]

    private static let emptyArena = ByteBuffer([])

    convenience init(body: ByteBuffer, arena: [UInt8], filter: ContentFilter, itemsKey: [UInt8]) {
        self.init(body: body, arena: arena.isEmpty ? Self.emptyArena : ByteBuffer(arena), filter: filter, itemsKey: itemsKey)
    }

    private init(body: ByteBuffer, arena: ByteBuffer, filter: ContentFilter, itemsKey: [UInt8]) {
        owners = (body, arena)
        self.body = body.bytes
        self.arena = arena.bytes
        self.filter = filter
        self.itemsKey = itemsKey
        #if DEBUG
            tracker = Tracker(body: body, arena: arena, filter: filter, itemsKey: itemsKey)
            tracker.document = self
        #endif
    }

    #if DEBUG
        /// What each reference holds in debug builds (see `DocumentRef`): whether the document
        /// is still there, and what it is made of, so that a use after it went reads valid bytes.
        /// One per document, so that an item stays one reference wide.
        // @unchecked Sendable: `document` is set once, in the document's init, before any
        // reference exists; the rest is immutable.
        final class Tracker: @unchecked Sendable {  // see above
            weak var document: JSONDocument?
            let body: ByteBuffer
            let arena: ByteBuffer
            let filter: ContentFilter
            let itemsKey: [UInt8]

            init(body: ByteBuffer, arena: ByteBuffer, filter: ContentFilter, itemsKey: [UInt8]) {
                self.body = body
                self.arena = arena
                self.filter = filter
                self.itemsKey = itemsKey
            }

            /// A new document over the same bytes, for a use after the first one went.
            func revived() -> JSONDocument { JSONDocument(body: body, arena: arena, filter: filter, itemsKey: itemsKey) }
        }

        let tracker: Tracker
    #endif

    @inline(__always)
    func slice(_ range: ByteRange, in storage: IDStorage) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: (storage == .arena ? arena : body)[range.range])
    }

    /// The bytes it holds.
    var byteCount: Int { body.count + arena.count }
}

/// The documents a collection's items point into. Items do not keep their document alive (a
/// reference count on every copy of an item cost a sixth of a diff): whatever holds items
/// holds these with them — a collection, a session, a change, a nested list's delta.
package struct DocumentOwners: Sendable {
    /// The first document held inline: most holders have one, and a one-element array would
    /// cost an allocation per collection.
    private var first: JSONDocument?
    private var more: [JSONDocument] = []

    init() {}

    init(_ document: JSONDocument) { first = document }

    /// Both sets, each document once.
    func merging(_ other: DocumentOwners) -> DocumentOwners {
        var merged = self
        guard other.count > 1 else {
            if let document = other.first { merged.add(document) }
            return merged
        }
        // Sessions that keep their items where they came gather many documents: a set keeps
        // merging two such linear, where looking each up in the other would not be.
        var known = Set(documents.map(ObjectIdentifier.init))
        for document in other.documents where known.insert(ObjectIdentifier(document)).inserted {
            if merged.first == nil { merged.first = document } else { merged.more.append(document) }
        }
        return merged
    }

    /// These and all of `others`, each document once, in one pass.
    func merging(_ others: [DocumentOwners]) -> DocumentOwners {
        guard !others.isEmpty else { return self }
        var merged = self
        var known = Set(documents.map(ObjectIdentifier.init))
        for other in others {
            for document in other.documents where known.insert(ObjectIdentifier(document)).inserted {
                if merged.first == nil { merged.first = document } else { merged.more.append(document) }
            }
        }
        return merged
    }

    private var documents: [JSONDocument] { (first.map { [$0] } ?? []) + more }

    /// The bytes the documents hold: each one's body (as it came, whitespace and all) and arena.
    var byteCount: Int {
        more.reduce(first?.byteCount ?? 0) { $0 + $1.byteCount }
    }

    /// How many documents.
    var count: Int { (first == nil ? 0 : 1) + more.count }

    private mutating func add(_ document: JSONDocument) {
        guard first !== document, !more.contains(where: { $0 === document }) else { return }
        if first == nil { first = document } else { more.append(document) }
    }
}

/// An item's reference to its document, which does not keep the document alive: the item's
/// holder does, through `DocumentOwners`. Reading bytes through it counts no reference.
///
/// Debug builds (every test, the fuzzers) check on each use that the document is still there.
/// A holder that dropped its owners too early is a bug in this code's lifetimes, which no
/// request's content decides; where it happens, the use is counted and logged
/// (`DocumentLifetime`), reads the bytes the reference keeps for the purpose, and the request
/// is answered a logged 500, so tests and fuzzers see it and the process goes on. Release
/// builds (`make run`, the Dockerfile) carry no check.
struct DocumentRef: Sendable {
    #if DEBUG
        private let tracker: JSONDocument.Tracker

        init(_ document: JSONDocument) { tracker = document.tracker }

        var document: JSONDocument {
            if let document = tracker.document { return document }
            DocumentLifetime.reportUseAfterRelease()
            return tracker.revived()
        }

        func slice(_ range: ByteRange, in storage: IDStorage) -> UnsafeBufferPointer<UInt8> { document.slice(range, in: storage) }
    #else
        // Unmanaged: the document is kept alive by the item's holder (see above).
        private let unmanaged: Unmanaged<JSONDocument>

        init(_ document: JSONDocument) { unmanaged = Unmanaged.passUnretained(document) }

        var document: JSONDocument { unmanaged.takeUnretainedValue() }

        @inline(__always)
        func slice(_ range: ByteRange, in storage: IDStorage) -> UnsafeBufferPointer<UInt8> {
            unmanaged._withUnsafeGuaranteedRef { $0.slice(range, in: storage) }
        }
    #endif
}

#if DEBUG
    /// Uses of a document after its holder let it go (debug builds; see `DocumentRef`): counted
    /// for the process, and for the thread, so that a request learns of those it met itself.
    package enum DocumentLifetime {
        package static let violations = Atomic<Int>(0)
        private static let logger = Logger(label: "livedelta.documents")
        private static let perThread: pthread_key_t = {
            var key = pthread_key_t()
            pthread_key_create(&key, nil)
            return key
        }()

        /// Uses counted on this thread so far.
        static var onThisThread: Int { Int(bitPattern: pthread_getspecific(perThread)) }

        static func reportUseAfterRelease() {
            violations.add(1, ordering: .relaxed)
            pthread_setspecific(perThread, UnsafeRawPointer(bitPattern: onThisThread + 1))
            logger.critical("an item outlived its document: its holder dropped the DocumentOwners")
        }
    }
#endif

/// Where an id's canonical bytes are.
enum IDStorage: UInt8, Sendable {
    /// Verbatim in the body (a string without escapes, a boolean, null).
    case body
    /// In the document's arena (a string with escapes, a number that is not a small integer).
    case arena
    /// No bytes: a whole number that fits in Int64, kept in the range's 64 bits.
    case inline
}

/// Folds a 64-bit hash to the 32 bits an item keeps (a match is always confirmed by bytes).
@inline(__always)
func fold(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash ^ (hash >> 32)) }

/// Byte ranges are 32-bit: a document holds at most 4 GiB, far above any body limit.
struct ByteRange: Sendable, Equatable {
    var start: UInt32
    var length: UInt32

    init(_ range: Range<Int>) {
        start = UInt32(truncatingIfNeeded: range.lowerBound)
        length = UInt32(truncatingIfNeeded: range.count)
    }

    init(inline value: Int64) {
        start = UInt32(truncatingIfNeeded: UInt64(bitPattern: value))
        length = UInt32(truncatingIfNeeded: UInt64(bitPattern: value) >> 32)
    }

    var range: Range<Int> { Int(start)..<Int(start + length) }

    var inlineValue: Int64 { Int64(bitPattern: UInt64(start) | UInt64(length) << 32) }
}
