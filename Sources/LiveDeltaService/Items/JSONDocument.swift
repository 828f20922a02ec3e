import ByteJSON
import Logging
import MicroHTTP
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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
