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

        public var description: String {
            switch self {
            case .index(let index): "\(index)"
            case .path(let path): path.description
            }
        }
    }

    public let id: any Hashable & Sendable
    public let collection: Collection
    public let level: Level
    public let firstPosition: Position
    public let secondPosition: Position

    public init(
        id: any Hashable & Sendable, collection: Collection, level: Level,
        firstPosition: Position, secondPosition: Position
    ) {
        self.id = id
        self.collection = collection
        self.level = level
        self.firstPosition = firstPosition
        self.secondPosition = secondPosition
    }

    public var description: String {
        "duplicate \(level.rawValue) id \(id) in the \(collection.rawValue) collection "
            + "at \(firstPosition) and \(secondPosition)"
    }
}
