/// What storage shared by replicas keeps of a session: its bytes, and where it is in its life.
package struct StoredSession: Sendable {
    package var version: UInt64
    /// A random token each time the session is created or replaced: versions start again at 0
    /// then, and a version alone could match a copy of an earlier life.
    package var incarnation: String
    /// The options, as a JSON object.
    package var options: [UInt8]
    /// The collection, as a body would send it.
    package var data: [UInt8]
    /// The parts `data` was stored in, in order (their `bytes` uncounted: 0); nil where it was
    /// stored whole.
    package var parts: [StoredPart]?

    package init(version: UInt64, incarnation: String, options: [UInt8], data: [UInt8], parts: [StoredPart]? = nil) {
        self.version = version
        self.incarnation = incarnation
        self.options = options
        self.data = data
        self.parts = parts
    }
}

/// Some of a stored session's units (items of a flat one, sections of a sectioned one): whole
/// parts, as a body would send them.
package struct StoredUnits: Sendable {
    package var version: UInt64
    package var incarnation: String
    package var options: [UInt8]
    /// The parts read, as a collection: an array of items, or an object of sections.
    package var data: [UInt8]
    /// The session's position of `data`'s first unit.
    package var first: Int
    /// The units the session holds.
    package var count: Int
    /// The items the session holds (`count` where it is flat).
    package var items: Int

    package init(version: UInt64, incarnation: String, options: [UInt8], data: [UInt8], first: Int, count: Int, items: Int) {
        self.version = version
        self.incarnation = incarnation
        self.options = options
        self.data = data
        self.first = first
        self.count = count
        self.items = items
    }
}

/// What a commit does to the session, as its log records it for live subscribers.
package enum StoredStep: String, Sendable {
    /// Created or replaced: a new life.
    case replaced = "p"
    case update = "c"
    case append = "a"
    /// Deleted: the life ends.
    case deleted = "e"
}

/// One step as the session's log holds it: what it did, and what it holds of the session after
/// it.
package struct LoggedStep: Sendable {
    package var cursor: String
    package var step: StoredStep
    package var incarnation: String
    package var version: UInt64
    package var baseVersion: UInt64?
    package var options: [UInt8]
    package var content: LoggedContent

    package init(
        cursor: String, step: StoredStep, incarnation: String, version: UInt64, baseVersion: UInt64?, options: [UInt8], content: LoggedContent
    ) {
        self.cursor = cursor
        self.step = step
        self.incarnation = incarnation
        self.version = version
        self.baseVersion = baseVersion
        self.options = options
        self.content = content
    }
}
