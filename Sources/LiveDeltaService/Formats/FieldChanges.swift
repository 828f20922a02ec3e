import ByteJSON
import LiveCollections

/// How much a changed item says (option `changes`).
package enum ChangeDetail: String, CaseIterable, Sendable {
    /// That it changed: the whole new item.
    case rows
    /// What changed: the new values of changed top-level fields, and the names of removed ones.
    case fields
}

/// What changed between two versions of an object item: the new values of its changed
/// top-level fields (added ones too), in the new item's order, and the names of the fields it
/// lost. Only the fields `filter` counts are looked at.
struct FieldChanges {
    var set: [(name: [UInt8], value: UnsafeBufferPointer<UInt8>)] = []
    var removed: [[UInt8]] = []
    /// Every field the old item had, counted or not: a set field is `replace`d there, `add`ed
    /// where new.
    var existing: Set<[UInt8]> = []

    /// Nil where either is not an object (a scalar item is its own id, so it never changes).
    /// `excluding`: fields left out (nested lists, answered with deltas of their own).
    init?(old: UnsafeBufferPointer<UInt8>, new: UnsafeBufferPointer<UInt8>, filter: ContentFilter, excluding excluded: Set<[UInt8]> = []) {
        guard let before = Self.members(of: old, filter: filter), let after = Self.members(of: new, filter: filter) else { return nil }
        existing = before.all
        var oldValues = [[UInt8]: JSONValue](minimumCapacity: before.counted.count)
        for member in before.counted { oldValues[member.name] = member.value }
        var seen = Set<[UInt8]>(minimumCapacity: after.counted.count)
        for member in after.counted.reversed() where seen.insert(member.name).inserted && !excluded.contains(member.name) {
            if oldValues[member.name] != member.value { set.append((member.name, member.text)) }
        }
        set.reverse()
        // Each name once, in the old item's order; a table, as an item may lose hundreds of
        // thousands of fields.
        var listed = Set<[UInt8]>()
        removed = before.counted.map(\.name).filter { !seen.contains($0) && !excluded.contains($0) && listed.insert($0).inserted }
    }

    private struct Member {
        let name: [UInt8]
        let value: JSONValue
        let text: UnsafeBufferPointer<UInt8>
    }

    /// An object's top-level members that count, with their values and text, and the names of
    /// all its members.
    private static func members(of text: UnsafeBufferPointer<UInt8>, filter: ContentFilter) -> (counted: [Member], all: Set<[UInt8]>)? {
        // The text was read under the request's depth limit, which is at most 1,000.
        var scanner = JSONScanner(text, maxDepth: 1_000)
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{") else { return nil }
        var counted: [Member] = []
        var all = Set<[UInt8]>()
        do {
            var key = try scanner.beginObject()
            while let current = key {
                let name = scanner.decoded(current)
                all.insert(name)
                let counts = filter.includes(current, in: scanner)
                scanner.skipWhitespace()
                let start = scanner.position
                let value = try scanner.buildValue(keeping: nil)
                if counts {
                    counted.append(Member(name: name, value: value, text: UnsafeBufferPointer(rebasing: text[start..<scanner.position])))
                }
                key = try scanner.nextKey()
            }
        } catch {
            return nil
        }
        return (counted, all)
    }
}

extension JSONWriter {
    /// `{"set": {name: new value, …}, "removed": [name, …]}`.
    mutating func fieldChanges(_ changes: FieldChanges) {
        raw("{\"set\":{")
        for (index, member) in changes.set.enumerated() {
            if index > 0 { raw(",") }
            member.name.withUnsafeBufferPointer { string(generalizedUTF8: $0) }
            raw(":")
            raw(member.value)
        }
        raw("},\"removed\":")
        array(changes.removed) { writer, name in name.withUnsafeBufferPointer { writer.string(generalizedUTF8: $0) } }
        raw("}")
    }

    /// A member name as an RFC 6901 reference token.
    static func pointerToken(_ name: [UInt8]) -> String {
        String(decoding: name, as: UTF8.self).replacingOccurrences("~", "~0").replacingOccurrences("/", "~1")
    }
}

/// A JSON array written one element at a time, onto a writer taken and given back.
struct OperationList: ~Copyable {
    private var writer: JSONWriter
    private var first = true

    init(writer: consuming JSONWriter) {
        self.writer = writer
        self.writer.raw("[")
    }

    mutating func next(_ write: (inout JSONWriter) -> Void) {
        if !first { writer.raw(",") }
        first = false
        write(&writer)
    }

    /// RFC 6902 operations that make the item at `path` (a JSON Pointer) its new version, field
    /// by field: `replace` (or `add`, for a new field) and `remove`.
    mutating func fieldPatch(_ changes: FieldChanges, at path: String) {
        for member in changes.set {
            next { writer in
                writer.raw(changes.existing.contains(member.name) ? "{\"op\":\"replace\",\"path\":" : "{\"op\":\"add\",\"path\":")
                writer.string(path + "/" + JSONWriter.pointerToken(member.name))
                writer.raw(",\"value\":")
                writer.raw(member.value)
                writer.raw("}")
            }
        }
        for name in changes.removed {
            next { writer in
                writer.raw("{\"op\":\"remove\",\"path\":")
                writer.string(path + "/" + JSONWriter.pointerToken(name))
                writer.raw("}")
            }
        }
    }

    consuming func finish() -> JSONWriter {
        writer.raw("]")
        return writer
    }
}
