import ByteJSON
import LiveCollections

/// Writes deltas and diff results in the wire format that openapi.yaml describes.
extension JSONWriter {
    mutating func member(_ name: StaticString, first: Bool = false) {
        if !first { raw(",") }
        key(name)
    }

    mutating func array<Values: Sequence>(_ values: Values, _ write: (inout JSONWriter, Values.Element) -> Void) {
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

    /// A batch delta; `reloadDetails` adds members to each reload (what changed, nested lists).
    mutating func delta<Position>(
        _ delta: Delta<Position>, _ position: (inout JSONWriter, Position) -> Void,
        reloadDetails: (inout JSONWriter, PositionPair<Position>) -> Void = { _, _ in }
    ) {
        raw("{\"deletions\":")
        array(delta.deletions, position)
        raw(",\"insertions\":")
        array(delta.insertions, position)
        func pairs(_ pairs: [PositionPair<Position>], detailed: Bool, into writer: inout JSONWriter) {
            writer.array(pairs) { writer, pair in
                writer.raw("{\"source\":")
                position(&writer, pair.source)
                writer.raw(",\"target\":")
                position(&writer, pair.target)
                if detailed { reloadDetails(&writer, pair) }
                writer.raw("}")
            }
        }
        raw(",\"moves\":")
        pairs(delta.moves, detailed: false, into: &self)
        raw(",\"reloads\":")
        pairs(delta.reloads, detailed: true, into: &self)
        raw("}")
    }

    /// A reload's `changes` and `nested` members, where there are any.
    mutating func reloadDetails(_ fields: FieldChanges?, nested: [NestedDelta], within spelling: DeltaSpelling) {
        changeDetails(fields, as: ",\"changes\":", nested: nested, within: spelling)
    }

    /// A changed item's fields under the member `fieldsMember` opens, and its `nested` deltas,
    /// where there are any.
    mutating func changeDetails(_ fields: FieldChanges?, as fieldsMember: StaticString, nested: [NestedDelta], within spelling: DeltaSpelling) {
        if let fields {
            raw(fieldsMember)
            fieldChanges(fields)
        }
        if !nested.isEmpty {
            raw(",\"nested\":")
            nestedDeltas(nested, within: spelling)
        }
    }

    mutating func indexDelta(_ delta: IndexDelta) { self.delta(delta) { $0.int($1) } }

    mutating func pathDelta(_ delta: IndexPathDelta) { self.delta(delta) { $0.path($1) } }

    mutating func items(_ items: some Sequence<JSONItem>) {
        array(items) { writer, item in writer.raw(item.text) }
    }

    /// The members of a flat answer (no braces, so callers can add their own).
    mutating func flatMembers(
        animation: AnimationStyle, delta: IndexDelta?, spelling: DeltaSpelling, old: ItemRows, new: ItemRows, deletedItems: [JSONItem]?
    ) {
        member("animation", first: true)
        string(animation.rawValue)
        if let delta {
            flatDelta(delta, spelling: spelling, old: old, new: new)
            member("changeCount")
            int(delta.changeCount)
        }
        member("oldCount")
        int(old.count)
        member("newCount")
        int(new.count)
        if let deletedItems {
            member("deletedItems")
            items(deletedItems)
        }
    }

    /// The members of a sectioned answer (no braces).
    mutating func sectionedMembers(
        sectionAnimation: AnimationStyle, itemAnimation: AnimationStyle, sectionDelta: IndexDelta?, itemDelta: IndexPathDelta?,
        spelling: DeltaSpelling, old: [JSONSection], new: [JSONSection], deletedItems: [JSONItem]?
    ) throws(APIError) {
        member("sectionAnimation", first: true)
        string(sectionAnimation.rawValue)
        member("itemAnimation")
        string(itemAnimation.rawValue)
        let format = spelling.format
        if format == .batch {
            if let sectionDelta {
                member("sectionDelta")
                indexDelta(sectionDelta)
            }
            if let itemDelta {
                member("itemDelta")
                if spelling.changes == .fields || !spelling.nested.isEmpty, let sectionDelta {
                    try SectionedFormatting(sectionDelta: sectionDelta, itemDelta: itemDelta, old: old, new: new, spelling: spelling)
                        .writeBatchItemDelta(to: &self)
                } else {
                    pathDelta(itemDelta)
                }
            }
        } else if let sectionDelta, let itemDelta {
            // Another format spells the whole delta, where both stages were computed.
            member("format")
            string(format.rawValue)
            member(format.memberName)
            try SectionedFormatting(sectionDelta: sectionDelta, itemDelta: itemDelta, old: old, new: new, spelling: spelling).write(to: &self)
        }
        if sectionDelta != nil {
            member("changeCount")
            int((sectionDelta?.changeCount ?? 0) + (itemDelta?.changeCount ?? 0))
        }
        member("oldSectionCount")
        int(old.count)
        member("newSectionCount")
        int(new.count)
        member("oldCount")
        int(old.itemCount)
        member("newCount")
        int(new.itemCount)
        if let deletedItems {
            member("deletedItems")
            items(deletedItems)
        }
    }
}
