/// A run of consecutive units of a stored collection (items of a flat list, sections of a
/// sectioned one), kept as one piece of text, so that a change rewrites the parts it touches
/// and not the collection (a commit's `PartPlan` says which).
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
