import ByteJSON
import LiveCollections

extension PatchEdit {
    /// The sections of a result with unique ids: an element that is still the very text of a
    /// held section is that section; the others are written out and read, together. The held
    /// sections kept are as they were, items and all, so the delta is the diff of the sections
    /// and of the items of the others alone, unless a held section is kept twice or an item of a
    /// section read has the id of one in a kept section: that result is checked and diffed
    /// whole, as an update would be.
    func sections(_ elements: [LazyJSON], held: [JSONSection], owners: DocumentOwners) throws(APIError) -> EditOutcome {
        var heldAt: [UnsafePointer<UInt8>: Int] = [:]
        for (index, section) in held.enumerated() {
            if let start = section.text.baseAddress { heldAt[start] = index }
        }
        let kept = elements.map { element -> Int? in
            guard case .text(let text) = element, let start = text.baseAddress, let index = heldAt[start], held[index].text.count == text.count
            else { return nil }
            return index
        }
        let touched = kept.indices.filter { kept[$0] == nil }
        var writer = JSONWriter()
        writer.raw("{\"sections\":[")
        for (count, position) in touched.enumerated() {
            if count > 0 { writer.raw(",") }
            elements[position].write(&writer)
        }
        writer.raw("]}")
        let read = try reading.collection(
            encoded: writer.bytes, sectioned: true, origin: { index in culprit(forItemAt: touched[index], sectioned: true) },
            place: { touched[$0] })
        guard case .sectioned(let written) = read.shape, written.count == touched.count else {
            throw .internalError("the patched sections were not read back")
        }
        var next = written.makeIterator()
        let result = kept.compactMap { index in index.map { held[$0] } ?? next.next() }
        let collection = JSONCollection.sectioned(result, owners: owners.merging(read.owners))
        let keptOld = Set(kept.compactMap { $0 })
        if keptOld.count == kept.count - touched.count,
            !Self.anyID(of: touched.flatMap { result[$0].items }, among: keptOld.map { held[$0] }),
            let delta = try? reading.options.policy.animatedDelta(
                from: held, to: result, touchedOld: held.indices.filter { !keptOld.contains($0) }, touchedNew: touched)
        {
            return .sectioned(result, owners: collection.owners, delta: delta)
        }
        try checkUnique(collection, sectioned: true)
        return .collection(collection)
    }

    /// Whether an item of `sections` has the id of one of `items`, by the ids' stored hashes.
    private static func anyID(of items: [JSONItem], among sections: [JSONSection]) -> Bool {
        guard !items.isEmpty else { return false }
        let finder = HashFinder(items)
        return sections.contains { section in section.items.contains { finder.find($0) != nil } }
    }
}
