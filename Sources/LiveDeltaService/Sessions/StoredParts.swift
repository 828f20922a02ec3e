/// A run of consecutive units of a stored collection (items of a flat list, sections of a
/// sectioned one), kept as one piece of text (`StoredParts`), so that a change rewrites the parts
/// it touches and not the collection.
package struct StoredPart: Sendable, Equatable {
    /// Unique among the parts of one session's life.
    package var name: String
    /// The units it holds (at least one).
    package var count: Int
    /// The length of its text: its units' text joined by commas.
    package var bytes: Int

    package init(name: String, count: Int, bytes: Int) {
        self.name = name
        self.count = count
        self.bytes = bytes
    }
}

/// Which text a collection's parts join into.
package enum StoredShape: String, Sendable {
    /// `[`, the parts, `]`.
    case flat = "f"
    /// `{"sections":[`, the parts, `]}`.
    case sectioned = "s"

    /// The text before the parts.
    package var opening: StaticString {
        switch self {
        case .flat: "["
        case .sectioned: "{\"sections\":["
        }
    }

    /// The text after them.
    package var closing: StaticString {
        switch self {
        case .flat: "]"
        case .sectioned: "]}"
        }
    }
}

/// What a commit stores of a collection: every part it is made of after the commit, in order,
/// the text of those it writes, and the names of the stored ones it drops.
package struct StoredParts {
    package var shape: StoredShape
    /// Every part, in order.
    package var manifest: [StoredPart]
    /// The parts this commit writes: each name with its text, in pieces that stay valid for the
    /// call the parts are given to.
    package var written: [(name: String, text: [UnsafeRawBufferPointer])]
    /// The stored parts this commit drops.
    package var removed: [String]

    /// Every part is written: nothing stored is kept.
    package var whole: Bool { written.count == manifest.count }

    /// The bytes of text written.
    package var writtenBytes: Int {
        written.reduce(0) { total, part in part.text.reduce(total) { $0 + $1.count } }
    }
}
