import ByteJSON
import LiveCollections

/// Writes deltas and diff results in the wire format that openapi.yaml describes.
extension JSONWriter {
    mutating func member(_ name: StaticString, first: Bool = false) {
        if !first { raw(",") }
        key(name)
    }

    mutating func array<T>(_ values: [T], _ write: (inout JSONWriter, T) -> Void) {
        raw("[")
        for (index, value) in values.enumerated() {
            if index > 0 { raw(",") }
            write(&self, value)
        }
        raw("]")
    }

    mutating func path(_ path: ItemPath) {
        raw("{\"section\":")
        int(path.section)
        raw(",\"item\":")
        int(path.item)
        raw("}")
    }

    mutating func delta<Position>(_ delta: Delta<Position>, _ position: (inout JSONWriter, Position) -> Void) {
        raw("{\"deletions\":")
        array(delta.deletions, position)
        raw(",\"insertions\":")
        array(delta.insertions, position)
        for (name, pairs) in [("moves", delta.moves), ("reloads", delta.reloads)] {
            raw(",")
            string(name)
            raw(":")
            array(pairs) { writer, pair in
                writer.raw("{\"source\":")
                position(&writer, pair.source)
                writer.raw(",\"target\":")
                position(&writer, pair.target)
                writer.raw("}")
            }
        }
        raw("}")
    }

    mutating func indexDelta(_ delta: IndexDelta) { self.delta(delta) { $0.int($1) } }

    mutating func pathDelta(_ delta: IndexPathDelta) { self.delta(delta) { $0.path($1) } }

    mutating func items(_ items: [JSONItem]) {
        array(items) { writer, item in writer.raw(item.text) }
    }

    mutating func flatResult(_ result: AnimatedDelta, old: [JSONItem], newCount: Int, includeDeletedItems: Bool) {
        raw("{")
        member("animation", first: true)
        string(result.animation.rawValue)
        if let delta = result.delta {
            member("delta")
            indexDelta(delta)
            member("changeCount")
            int(delta.changeCount)
        }
        member("oldCount")
        int(old.count)
        member("newCount")
        int(newCount)
        if includeDeletedItems {
            member("deletedItems")
            items(result.deletedIndices.map { old[$0] })
        }
        raw("}")
    }

    mutating func sectionedResult(_ result: AnimatedSectionedDelta, old: [JSONSection], new: [JSONSection], includeDeletedItems: Bool) {
        raw("{")
        member("sectionAnimation", first: true)
        string(result.sectionAnimation.rawValue)
        member("itemAnimation")
        string(result.itemAnimation.rawValue)
        if let sectionDelta = result.sectionDelta {
            member("sectionDelta")
            indexDelta(sectionDelta)
        }
        if let itemDelta = result.itemDelta {
            member("itemDelta")
            pathDelta(itemDelta)
        }
        if result.sectionDelta != nil {
            member("changeCount")
            int(result.changeCount)
        }
        member("oldSectionCount")
        int(old.count)
        member("newSectionCount")
        int(new.count)
        member("oldCount")
        int(old.reduce(0) { $0 + $1.items.count })
        member("newCount")
        int(new.reduce(0) { $0 + $1.items.count })
        if includeDeletedItems {
            member("deletedItems")
            items(result.deletedItemPaths.map { old[$0.section].items[$0.item] })
        }
        raw("}")
    }
}
