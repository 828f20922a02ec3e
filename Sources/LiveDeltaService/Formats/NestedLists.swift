import ByteJSON
import LiveCollections
import MicroHTTP

/// A changed item's list field (option `nested`) diffed by its own options, so that the answer
/// carries the inner list's delta rather than the whole list.
struct NestedDelta {
    let field: [UInt8]
    let options: DiffOptions
    let old: [JSONItem]
    let new: [JSONItem]
    /// The documents `old` and `new` point into: each list was read into one of its own.
    let owners: DocumentOwners
    let animation: AnimationStyle
    let delta: IndexDelta

    /// The fields of `nested` that hold a list in both versions of an item, each with its
    /// delta. A field its options cannot diff (not a list on both sides, an item without its
    /// id, an id twice where ids must be unique, more items than the thresholds take) is left
    /// out: it changes as any other field does.
    static func deltas(old: JSONItem, new: JSONItem, nested: [String: DiffOptions]) -> [NestedDelta] {
        var found: [NestedDelta] = []
        for (field, options) in nested.sorted(by: { $0.key < $1.key }) {
            let name = Array(field.utf8)
            guard let (before, beforeOwners) = list(named: name, in: old.text, options: options),
                let (after, afterOwners) = list(named: name, in: new.text, options: options),
                let result = try? options.policy.animatedDelta(from: before, to: after), let delta = result.delta
            else { continue }
            guard delta.hasChanges else { continue }
            found.append(
                NestedDelta(
                    field: name, options: options, old: before, new: after, owners: beforeOwners.merging(afterOwners),
                    animation: result.animation, delta: delta))
        }
        return found
    }

    /// The nested deltas of changed items, by their new positions (none where `nested` is empty).
    static func byTarget<Position: Hashable>(
        _ pairs: [PositionPair<Position>], nested: [String: DiffOptions], old: (Position) -> JSONItem, new: (Position) -> JSONItem
    ) -> [Position: [NestedDelta]] {
        guard !nested.isEmpty else { return [:] }
        var found = [Position: [NestedDelta]]()
        for pair in pairs {
            let deltas = deltas(old: old(pair.source), new: new(pair.target), nested: nested)
            if !deltas.isEmpty { found[pair.target] = deltas }
        }
        return found
    }

    /// An object's member `name` (the last, where it repeats), read as a flat collection: its
    /// items and the document they point into.
    private static func list(
        named name: [UInt8], in text: UnsafeBufferPointer<UInt8>, options: DiffOptions
    ) -> ([JSONItem], DocumentOwners)? {
        // The text was read under the request's depth limit, which is at most 1,000.
        var scanner = JSONScanner(text, maxDepth: 1_000)
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{") else { return nil }
        var found: UnsafeBufferPointer<UInt8>?
        do {
            var key = try scanner.beginObject()
            while let current = key {
                let matches = scanner.string(current, equals: name)
                scanner.skipWhitespace()
                let start = scanner.position
                _ = try scanner.scanValue()
                if matches { found = UnsafeBufferPointer(rebasing: text[start..<scanner.position]) }
                key = try scanner.nextKey()
            }
        } catch {
            return nil
        }
        guard let found, found.first == UInt8(ascii: "[") else { return nil }
        guard
            let collection = try? CollectionDocument.read(
                ByteBuffer(Array(found)), options: options, limits: ReadLimits(maxDepth: 1_000, maxItems: .max)),
            case .flat(let items) = collection.shape
        else { return nil }
        return (items, collection.owners)
    }

    /// How the inner list's delta is spelled: the answer's format and detail, the list's own
    /// filter and nested lists.
    func spelling(within outer: DeltaSpelling) -> DeltaSpelling {
        var inner = outer
        inner.filter = options.filter
        inner.nested = options.nested
        return inner
    }
}

extension JSONWriter {
    /// `{field: {animation, the delta in the answer's format, changeCount, oldCount, newCount}}`.
    mutating func nestedDeltas(_ deltas: [NestedDelta], within spelling: DeltaSpelling) {
        raw("{")
        for (index, nested) in deltas.enumerated() {
            if index > 0 { raw(",") }
            nested.field.withUnsafeBufferPointer { string(generalizedUTF8: $0) }
            raw(":{")
            flatMembers(
                animation: nested.animation, delta: nested.delta, spelling: nested.spelling(within: spelling), old: ItemRows(nested.old),
                new: ItemRows(nested.new), deletedItems: nil)
            raw("}")
        }
        raw("}")
    }
}
