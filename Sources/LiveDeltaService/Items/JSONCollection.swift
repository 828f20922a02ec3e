import ByteJSON
import LiveCollections

/// A collection read from JSON: flat items, or sections of items, with the documents they
/// point into (which it keeps alive; its items do not).
package struct JSONCollection: Sendable {
    package enum Shape: Sendable {
        case flat([JSONItem])
        case sectioned([JSONSection])
    }

    package var shape: Shape
    package var owners: DocumentOwners

    package static func flat(_ items: [JSONItem], owners: DocumentOwners) -> JSONCollection {
        JSONCollection(shape: .flat(items), owners: owners)
    }

    package static func sectioned(_ sections: [JSONSection], owners: DocumentOwners) -> JSONCollection {
        JSONCollection(shape: .sectioned(sections), owners: owners)
    }

    /// An empty collection of the same kind.
    var emptied: JSONCollection {
        switch shape {
        case .flat: .flat([], owners: DocumentOwners())
        case .sectioned: .sectioned([], owners: DocumentOwners())
        }
    }

    package var itemCount: Int {
        switch shape {
        case .flat(let items): items.count
        case .sectioned(let sections): sections.itemCount
        }
    }

    /// Its places: items of a flat collection, sections of a sectioned one.
    var placeCount: Int {
        switch shape {
        case .flat(let items): items.count
        case .sectioned(let sections): sections.count
        }
    }

    /// The id of the place (an item, or a section) at `position`, as JSON text; nil where
    /// there is none.
    func unitID(at position: Int) -> String? {
        switch shape {
        case .flat(let items): items.indices.contains(position) ? items[position].uniqueID.description : nil
        case .sectioned(let sections): sections.indices.contains(position) ? sections[position].uniqueID.description : nil
        }
    }

    var kindName: String {
        switch shape {
        case .flat: "flat (an array of items)"
        case .sectioned: "sectioned ({\"sections\": [...]})"
        }
    }
}
