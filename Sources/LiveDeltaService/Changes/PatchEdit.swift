import ByteJSON
import LiveCollections

/// An RFC 6902 patch applied to a session's document: the array of items, or
/// `{"sections": [...]}` with each section's items under its `itemsKey`. The document is a lazy
/// tree (`LazyJSON`), opened only where the patch goes, whose arrays are overlays
/// (`ListOverlay`); a flat session's list is an overlay of the held items, so the patch costs
/// the places it reaches. The items it wrote are read; the others are the held items
/// themselves, and the delta follows from the items the patch touched, with no diff of the
/// lists (`EditFinish.flat`). A sectioned result keeps the held sections the patch did not
/// reach and reads the others; its delta is the diff of the sections and of the items of those
/// it reached. A flat list that an operation on the root (a path or `from` of "") took or gave
/// whole is written out, read whole and diffed as an update would be; so is a sectioned
/// document left as anything but `{"sections": [...]}`.
struct PatchEdit {
    let body: ChangeBody
    let operations: [PatchOperation]
    let reading: ChangeReading

    /// The path (or from) leads nowhere in the document as it is: the operation's pointer is
    /// added where the operation is known.
    private static func missing(_ message: String) -> APIError { APIError(.changeConflict, message: message) }

    private static func invalid(_ message: String) -> APIError { APIError(.invalidOperation, message: message) }

    func apply(to current: JSONCollection) throws(APIError) -> EditOutcome {
        let sectioned: Bool
        // The document as a lazy tree: a flat session's is its list, an overlay of the held
        // items; a sectioned one's, `{"sections": [...]}` over the held sections.
        var root: LazyJSON
        switch current.shape {
        case .flat(let items):
            sectioned = false
            root = .array(ListOverlay(heldCount: items.count) { .text(items[$0].text) })
        case .sectioned(let sections):
            sectioned = true
            root = .object(LazyMembers([(Array("sections".utf8), .array(ListOverlay(sections.map { LazyJSON.text($0.text) })))]))
        }
        var budget = Budget()
        for operation in operations {
            do throws(APIError) {
                try apply(operation, to: &root, budget: &budget)
            } catch {
                // A refusal made below the operation names no place yet: it is the operation's.
                var refusal = error
                if refusal.pointer == nil { refusal.pointer = operation.pointer.description }
                throw refusal
            }
        }
        // A list no operation took or gave whole is still the overlay of the held items, whose
        // runs are those items as they were; any other result is written out and read whole.
        if case .flat(let items) = current.shape, case .array(let list) = root, !operations.contains(where: \.reachesRoot) {
            return try flatItems(list, held: items, owners: current.owners)
        }
        if case .sectioned(let held) = current.shape, case .object(let members) = root, members.count == 1,
            case .array(let elements) = members[Array("sections".utf8)]
        {
            return try sections(Array(elements), held: held, owners: current.owners)
        }
        switch (root, sectioned) {
        case (.array, false), (.text, false), (.owned, false), (.object, true), (.text, true), (.owned, true):
            return try finish(sectioned: sectioned, heldCount: current.placeCount).whole(encoded: root.bytes, sectioned: sectioned)
        default:
            throw APIError(
                .invalidOperation,
                message: sectioned ? "the patch must leave {\"sections\": [...]}" : "the patch must leave an array of items",
                pointer: (operations.last { $0.path.isEmpty }?.pointer ?? JSONPointer()).description)
        }
    }

    /// The last step, whose refusals about the result's places go on the operations that
    /// wrote there (`heldCount`: the places the list had before the patch).
    func finish(sectioned: Bool, heldCount: Int) -> EditFinish {
        EditFinish(reading: reading) { culprit(forItemAt: $0, sectioned: sectioned, heldCount: heldCount) }
    }

    /// The most a patch's `copy` operations may write together: what the largest body (32 MiB by
    /// default) could have sent as values. A copy costs the bytes it writes, like an `add`; left
    /// unbounded, copies of a value into itself double it with each operation, and a patch of a
    /// kilobyte would ask for terabytes.
    static let maxCopiedBytes = 32 << 20
    /// The most of the document a patch's `test` operations may compare together: twice the
    /// largest body. A test costs the value it reads, which may be far larger than the value it
    /// gives (whitespace, digits, escapes in the stored text); left unbounded, a body of tests of
    /// one padded item would hold a thread for hours.
    static let maxTestedBytes = 64 << 20

    /// What a patch's copies and tests may still spend.
    private struct Budget {
        var copied = PatchEdit.maxCopiedBytes
        var tested = PatchEdit.maxTestedBytes

        /// Takes `value`'s bytes from what a copy (or a test) may still spend, or refuses the
        /// operation.
        mutating func spend(on value: LazyJSON, copying: Bool, by operation: PatchOperation) throws(APIError) {
            let left = copying ? copied : tested
            guard let size = value.byteCount(upTo: left) else {
                throw copying
                    ? APIError(
                        .sessionTooLarge,
                        message: "a patch's copies write at most \(PatchEdit.maxCopiedBytes) bytes together; this copy would go past that",
                        pointer: operation.pointer.description)
                    : APIError(
                        .invalidOperation,
                        message:
                            "a patch's tests compare at most \(PatchEdit.maxTestedBytes) bytes of the document together; "
                            + "this test would go past that",
                        pointer: operation.pointer.description)
            }
            if copying { copied -= size } else { tested -= size }
        }
    }

    private func apply(_ operation: PatchOperation, to root: inout LazyJSON, budget: inout Budget) throws(APIError) {
        let path = operation.path[...]
        switch operation.kind {
        case .add: try Self.add(value(operation), at: path, in: &root)
        case .remove:
            guard !path.isEmpty else { throw Self.invalid("a patch cannot remove the whole document") }
            _ = try Self.remove(at: path, in: &root)
        case .replace:
            _ = try Self.value(at: path, in: &root)
            if path.isEmpty {
                root = value(operation)
            } else {
                _ = try Self.remove(at: path, in: &root)
                try Self.add(value(operation), at: path, in: &root)
            }
        case .move:
            let from = (operation.from ?? [])[...]
            guard from != path else { return }
            if path.starts(with: from) { throw Self.invalid("a value cannot move into itself") }
            let moved = try Self.remove(at: from, in: &root)
            try Self.add(moved, at: path, in: &root)
        case .copy:
            let value = try Self.value(at: (operation.from ?? [])[...], in: &root)
            try budget.spend(on: value, copying: true, by: operation)
            try Self.add(value, at: path, in: &root)
        case .test:
            let found = try Self.value(at: path, in: &root)
            try budget.spend(on: found, copying: false, by: operation)
            guard let expected = value(operation).value, found.value == expected else {
                throw APIError(
                    .testFailed, message: "test failed: the value at \(Self.describe(path)) is not the one given",
                    pointer: operation.pointer.description)
            }
        }
    }

    private func value(_ operation: PatchOperation) -> LazyJSON {
        operation.value.map { .text(body.text($0)) } ?? .owned(Array("null".utf8))
    }

    private static func describe(_ path: ArraySlice<[UInt8]>) -> String {
        path.isEmpty ? "the root" : path.map { "/" + String(decoding: $0, as: UTF8.self) }.joined()
    }

    // MARK: - RFC 6902 on the document

    /// Goes down to the parent of the path's last token and runs `last` on it.
    private static func parent<T>(
        of path: ArraySlice<[UInt8]>, in node: inout LazyJSON, _ last: (inout LazyJSON, [UInt8]) throws(APIError) -> T
    ) throws(APIError) -> T {
        node.open()
        guard let token = path.first else { throw Self.invalid("the path is the root") }
        if path.count == 1 { return try last(&node, token) }
        let rest = path.dropFirst()
        if let result = try node.withElements({ elements throws(APIError) in
            guard let index = arrayIndex(token, count: elements.count, end: false) else {
                throw Self.missing("\(describe(path)) leads nowhere: \(String(decoding: token, as: UTF8.self)) is not an index of the array")
            }
            guard
                let result = try elements.modify(
                    at: index, { (element: inout LazyJSON) throws(APIError) in try parent(of: rest, in: &element, last) })
            else {
                throw .internalError("an array lost its element \(index)")
            }
            return result
        }) {
            return result
        }
        if let result = try node.withMembers({ members throws(APIError) in
            guard let result = try members.modify(token, { (member: inout LazyJSON) throws(APIError) in try parent(of: rest, in: &member, last) })
            else {
                throw Self.missing("\(describe(path)) leads nowhere: there is no member \(String(decoding: token, as: UTF8.self))")
            }
            return result
        }) {
            return result
        }
        throw Self.missing("\(describe(path)) leads nowhere: it goes into a value that is not an array or object")
    }

    private static func value(at path: ArraySlice<[UInt8]>, in root: inout LazyJSON) throws(APIError) -> LazyJSON {
        guard !path.isEmpty else { return root }
        return try parent(of: path, in: &root) { parent, token throws(APIError) in
            parent.open()
            let element = try parent.withElements { elements throws(APIError) in
                guard let index = arrayIndex(token, count: elements.count, end: false) else {
                    throw Self.missing("there is nothing at \(describe(path))")
                }
                // Made a node: a held item read here and copied elsewhere is still that item.
                guard let node = elements.node(at: index) else { throw .internalError("an array lost its element \(index)") }
                return elements[node]
            }
            if let element { return element }
            switch parent {
            case .object(let members):
                guard let value = members[token] else { throw Self.missing("there is nothing at \(describe(path))") }
                return value
            default: throw Self.missing("there is nothing at \(describe(path))")
            }
        }
    }

    private static func remove(at path: ArraySlice<[UInt8]>, in root: inout LazyJSON) throws(APIError) -> LazyJSON {
        try parent(of: path, in: &root) { parent, token throws(APIError) in
            parent.open()
            let removed =
                parent.withElements { elements in
                    guard let index = arrayIndex(token, count: elements.count, end: false) else { return nil }
                    return elements.remove(at: index)
                } ?? parent.withMembers { members in members.remove(token) }
            guard let removed = removed ?? nil else { throw Self.missing("there is nothing at \(describe(path))") }
            return removed
        }
    }

    private static func add(_ value: LazyJSON, at path: ArraySlice<[UInt8]>, in root: inout LazyJSON) throws(APIError) {
        guard !path.isEmpty else {
            root = value
            return
        }
        try parent(of: path, in: &root) { parent, token throws(APIError) in
            parent.open()
            let added: Void? =
                try parent.withElements { elements throws(APIError) in
                    guard let index = arrayIndex(token, count: elements.count, end: true) else {
                        throw Self.missing("\(describe(path)) is not a place in the array: an index from 0 to \(elements.count), or -")
                    }
                    guard elements.insert(value, at: index) else { throw .internalError("an array lost its place \(index)") }
                } ?? parent.withMembers { members in members.set(value, for: token) }
            guard added != nil else { throw Self.missing("\(describe(path)) goes into a value that is not an array or object") }
        }
    }

    /// An array index token: digits without a leading zero, below `count` (or up to it, and `-`,
    /// where adding at the end).
    private static func arrayIndex(_ token: [UInt8], count: Int, end: Bool) -> Int? {
        if end && token == [UInt8(ascii: "-")] { return count }
        guard !token.isEmpty, token.count <= 18, token.allSatisfy({ (0x30...0x39).contains($0) }), token == [0x30] || token.first != 0x30,
            let index = Int(String(decoding: token, as: UTF8.self))
        else { return nil }
        return index < count || (end && index == count) ? index : nil
    }
}
