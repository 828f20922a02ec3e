/// A collection that must be unique holds one id twice.
public struct DuplicateIdentifierError: Error, CustomStringConvertible {
    /// Which of the two collections holds the duplicate.
    public enum Collection: String, Sendable {
        case old, new
    }

    /// Whether two sections or two items share the id.
    public enum Level: String, Sendable {
        case section, item
    }

    /// A place in a flat collection (an index) or in a sectioned one (a path).
    public enum Position: Hashable, Sendable, CustomStringConvertible {
        case index(Int)
        case path(ItemPath)

        /// The index, or the path as `[section, item]`.
        public var description: String {
            switch self {
            case .index(let index): "\(index)"
            case .path(let path): path.description
            }
        }
    }

    /// The id that appears twice.
    public let id: any Hashable & Sendable
    /// The collection, old or new, that holds it twice.
    public let collection: Collection
    /// Whether two sections or two items share it.
    public let level: Level
    /// Where it first appears.
    public let firstPosition: Position
    /// Where it appears again.
    public let secondPosition: Position

    @usableFromInline package init(
        id: any Hashable & Sendable, collection: Collection, level: Level,
        firstPosition: Position, secondPosition: Position
    ) {
        self.id = id
        self.collection = collection
        self.level = level
        self.firstPosition = firstPosition
        self.secondPosition = secondPosition
    }

    /// The id, the collection and both positions, in words.
    public var description: String {
        "duplicate \(level.rawValue) id \(id) in the \(collection.rawValue) collection "
            + "at \(firstPosition) and \(secondPosition)"
    }
}
