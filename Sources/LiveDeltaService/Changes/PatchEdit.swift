import ByteJSON
import LiveCollections

/// An RFC 6902 patch applied to a session's document: the array of items, or
/// `{"sections": [...]}` with each section's items under its `itemsKey`. The document is opened
/// only where the patch goes (`LazyJSON`). A flat list's items that the patch left as they were
/// are the held items themselves; only the items it wrote are read. A sectioned result is
/// written out and read whole. Either is then diffed as an update would be.
struct PatchEdit {
    let body: ChangeBody
    let operations: [PatchOperation]
    let reading: ChangeReading

    private enum Failure: Error {
        /// The path (or from) leads nowhere in the document as it is.
        case missing(String)
        case invalid(String)
    }

    func apply(to current: JSONCollection) throws(APIError) -> EditOutcome {
        let sectioned: Bool
        var root: LazyJSON
        switch current.shape {
        case .flat(let items):
            sectioned = false
            root = .array(items.map { .text($0.text) })
        case .sectioned(let sections):
            sectioned = true
            root = .object([(Array("sections".utf8), .array(sections.map { .text($0.text) }))])
        }
        for operation in operations {
            do {
                try apply(operation, to: &root)
            } catch let failure as Failure {
                switch failure {
                case .missing(let message):
                    throw APIError(.changeConflict, message: message, pointer: operation.pointer.description)
                case .invalid(let message):
                    throw APIError(.invalidOperation, message: message, pointer: operation.pointer.description)
                }
            } catch let error as APIError {
                throw error
            } catch {
                throw .internalError("a patch failed with \(error)")
            }
        }
        // Each such patch keeps its items' text in a document of its own: past
        // `FlatKeyedEdit.maxDocuments`, the list is written anew into one, as below.
        if case .flat(let held) = current.shape, case .array(let elements) = root, current.owners.count < FlatKeyedEdit.maxDocuments {
            return .collection(try flatItems(elements, held: held, owners: current.owners))
        }
        let text: [UInt8]
        switch (root, sectioned) {
        case (.array, false), (.text, false), (.owned, false): text = root.bytes
        case (.object, true), (.text, true), (.owned, true): text = root.bytes
        default:
            throw APIError(
                .invalidOperation,
                message: sectioned ? "the patch must leave {\"sections\": [...]}" : "the patch must leave an array of items",
                pointer: (operations.last { $0.path.isEmpty }?.pointer ?? JSONPointer()).description)
        }
        let collection = try reading.collection(encoded: text, sectioned: sectioned) { index in
            culprit(forItemAt: index, sectioned: sectioned)
        }
        try checkUnique(collection, sectioned: sectioned)
        return .collection(collection)
    }

    /// The items of a flat result: an element that is still the very text of a held item is
    /// that item (its id and hashes as they were); the others are read, together, as a body's
    /// items would be. Held items are found by walking the held list alongside, so a patch that
    /// moves items far costs one table of the held items' places.
    private func flatItems(_ elements: [LazyJSON], held: [JSONItem], owners: DocumentOwners) throws(APIError) -> JSONCollection {
        var items: [JSONItem?] = []
        items.reserveCapacity(elements.count)
        var written: [UInt8] = []
        var writtenAt: [(position: Int, range: Range<Int>)] = []
        var cursor = 0
        var places: [Int: Int]?
        /// Held items placed so far, and those placed twice (a copy repeats their id).
        var placed = [Bool](repeating: false, count: reading.options.unique ? held.count : 0)
        var placedTwice: [JSONItem] = []
        let bodyText = body.body.bytes
        /// The held item whose text `text` is, if any.
        func heldItem(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
            func same(_ index: Int) -> Bool { held[index].text.baseAddress == text.baseAddress && held[index].text.count == text.count }
            // Next in line, or a few further on (the ones between were removed).
            for index in cursor..<min(held.count, cursor + 8) where same(index) {
                cursor = index + 1
                return index
            }
            // A value from the patch itself is no held item.
            if let start = text.baseAddress, let bodyStart = bodyText.baseAddress, start >= bodyStart, start < bodyStart + bodyText.count {
                return nil
            }
            if places == nil {
                var table = [Int: Int](minimumCapacity: held.count)
                for (index, item) in held.enumerated() { table[Int(bitPattern: item.text.baseAddress)] = index }
                places = table
            }
            guard let index = places?[Int(bitPattern: text.baseAddress)], same(index) else { return nil }
            cursor = index + 1
            return index
        }
        for (position, element) in elements.enumerated() {
            if case .text(let text) = element, let index = heldItem(text) {
                items.append(held[index])
                if !placed.isEmpty {
                    if placed[index] { placedTwice.append(held[index]) }
                    placed[index] = true
                }
                continue
            }
            let start = written.count
            switch element {
            case .text(let text): written.append(contentsOf: text)
            case .owned(let text): written.append(contentsOf: text)
            case .array, .object: written.append(contentsOf: element.bytes)
            }
            writtenAt.append((position, start..<written.count))
            items.append(nil)
        }
        let (read, readOwners) = try written.withUnsafeBufferPointer { text throws(APIError) in
            try reading.items(
                writtenAt.map { UnsafeBufferPointer(rebasing: text[$0.range]) },
                origins: writtenAt.map { culprit(forItemAt: $0.position, sectioned: false) })
        }
        for (index, place) in writtenAt.enumerated() { items[place.position] = read[index] }
        var list = items.compactMap { $0 }
        guard list.count == elements.count else { throw .internalError("a patched item was not read") }
        if !reading.options.unique {
            // Occurrences follow the order the patch left.
            var seen = [JSONItemID: UInt32]()
            numberOccurrences(&list, seen: &seen)
        }
        if reading.options.unique { try checkUnique(list, suspects: read + placedTwice) }
        return JSONCollection.flat(list, owners: owners.merging(readOwners))
    }

    /// Refuses a flat result that holds an id twice, as matching the whole list would (the
    /// repeat that comes first), looking closely only at the items whose id is one of
    /// `suspects`': every repeat involves one of them (an item the patch wrote, or a held item
    /// placed twice), as the held items' ids were distinct.
    private func checkUnique(_ list: [JSONItem], suspects: [JSONItem]) throws(APIError) {
        guard !suspects.isEmpty else { return }
        let finder = HashFinder(suspects)
        var first: [JSONItemID: Int] = [:]
        for position in list.indices where finder.find(list[position]) != nil {
            let id = list[position].uniqueID
            if let earlier = first[id] {
                throw repeated(
                    id: "\(id)", first: "\(earlier)", second: "\(position)", at: culprit(forItemAt: position, sectioned: false), section: false)
            }
            first[id] = position
        }
    }

    private func repeated(id: String, first: String, second: String, at pointer: JSONPointer, section: Bool) -> APIError {
        APIError(
            .duplicateID,
            message: "the patch would leave the \(section ? "section" : "item") id \(id) twice, at \(first) and \(second); ids must be unique",
            pointer: pointer.description)
    }

    /// Repeated ids are the patch's fault: named here, at the operation that wrote the item.
    private func checkUnique(_ collection: JSONCollection, sectioned: Bool) throws(APIError) {
        if reading.options.unique {
            do throws(SessionError) {
                _ = try SessionRules.holder(for: collection, options: reading.options)
            } catch {
                guard case .duplicate(let duplicate) = error else { throw .internalError("checking ids failed with \(error)") }
                let position: Int? =
                    switch duplicate.secondPosition {
                    case .index(let index): index
                    case .path(let path): path.section
                    }
                throw repeated(
                    id: "\(duplicate.id)", first: "\(duplicate.firstPosition)", second: "\(duplicate.secondPosition)",
                    at: position.map { culprit(forItemAt: $0, sectioned: sectioned) } ?? operations.last?.pointer ?? JSONPointer(),
                    section: duplicate.level == .section)
            }
        }
    }

    /// The operation a refusal about the result's item (or section) `index` is put on: the last
    /// that wrote at that place, else the last that wrote anything.
    private func culprit(forItemAt index: Int, sectioned: Bool) -> JSONPointer {
        let token = Array(String(index).utf8)
        let writes = operations.filter { $0.kind != .test && $0.kind != .remove }
        let place = sectioned ? 1 : 0
        return (writes.last { $0.path.count > place && $0.path[place] == token } ?? writes.last ?? operations.last)?.pointer ?? JSONPointer()
    }

    private func apply(_ operation: PatchOperation, to root: inout LazyJSON) throws {
        let path = operation.path[...]
        switch operation.kind {
        case .add: try Self.add(value(operation), at: path, in: &root)
        case .remove:
            guard !path.isEmpty else { throw Failure.invalid("a patch cannot remove the whole document") }
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
            if path.starts(with: from) { throw Failure.invalid("a value cannot move into itself") }
            let moved = try Self.remove(at: from, in: &root)
            try Self.add(moved, at: path, in: &root)
        case .copy:
            try Self.add(try Self.value(at: (operation.from ?? [])[...], in: &root), at: path, in: &root)
        case .test:
            let found = try Self.value(at: path, in: &root)
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

    // MARK: - RFC 6902 on a lazy document

    /// Goes down to the parent of the path's last token and runs `last` on it.
    private static func parent<T>(of path: ArraySlice<[UInt8]>, in node: inout LazyJSON, _ last: (inout LazyJSON, [UInt8]) throws -> T) throws -> T {
        node.open()
        guard let token = path.first else { throw Failure.invalid("the path is the root") }
        if path.count == 1 { return try last(&node, token) }
        switch node {
        case .array(var elements):
            guard let index = arrayIndex(token, count: elements.count, end: false) else {
                throw Failure.missing("\(describe(path)) leads nowhere: \(String(decoding: token, as: UTF8.self)) is not an index of the array")
            }
            node = .owned([])
            defer { node = .array(elements) }
            return try parent(of: path.dropFirst(), in: &elements[index], last)
        case .object(var members):
            guard let index = members.firstIndex(where: { $0.name == token }) else {
                throw Failure.missing("\(describe(path)) leads nowhere: there is no member \(String(decoding: token, as: UTF8.self))")
            }
            node = .owned([])
            defer { node = .object(members) }
            return try parent(of: path.dropFirst(), in: &members[index].value, last)
        default:
            throw Failure.missing("\(describe(path)) leads nowhere: it goes into a value that is not an array or object")
        }
    }

    private static func value(at path: ArraySlice<[UInt8]>, in root: inout LazyJSON) throws -> LazyJSON {
        guard !path.isEmpty else { return root }
        return try parent(of: path, in: &root) { parent, token in
            parent.open()
            switch parent {
            case .array(let elements):
                guard let index = arrayIndex(token, count: elements.count, end: false) else {
                    throw Failure.missing("there is nothing at \(describe(path))")
                }
                return elements[index]
            case .object(let members):
                guard let member = members.last(where: { $0.name == token }) else { throw Failure.missing("there is nothing at \(describe(path))") }
                return member.value
            default: throw Failure.missing("there is nothing at \(describe(path))")
            }
        }
    }

    private static func remove(at path: ArraySlice<[UInt8]>, in root: inout LazyJSON) throws -> LazyJSON {
        try parent(of: path, in: &root) { parent, token in
            parent.open()
            switch parent {
            case .array(var elements):
                guard let index = arrayIndex(token, count: elements.count, end: false) else {
                    throw Failure.missing("there is nothing at \(describe(path))")
                }
                parent = .owned([])
                let removed = elements.remove(at: index)
                parent = .array(elements)
                return removed
            case .object(var members):
                guard let index = members.firstIndex(where: { $0.name == token }) else {
                    throw Failure.missing("there is nothing at \(describe(path))")
                }
                parent = .owned([])
                let removed = members.remove(at: index)
                parent = .object(members)
                return removed.value
            default: throw Failure.missing("there is nothing at \(describe(path))")
            }
        }
    }

    private static func add(_ value: LazyJSON, at path: ArraySlice<[UInt8]>, in root: inout LazyJSON) throws {
        guard !path.isEmpty else {
            root = value
            return
        }
        try parent(of: path, in: &root) { parent, token in
            parent.open()
            switch parent {
            case .array(var elements):
                guard let index = arrayIndex(token, count: elements.count, end: true) else {
                    throw Failure.missing("\(describe(path)) is not a place in the array: an index from 0 to \(elements.count), or -")
                }
                parent = .owned([])
                elements.insert(value, at: index)
                parent = .array(elements)
            case .object(var members):
                parent = .owned([])
                if let index = members.firstIndex(where: { $0.name == token }) {
                    members[index].value = value
                } else {
                    members.append((token, value))
                }
                parent = .object(members)
            default: throw Failure.missing("\(describe(path)) goes into a value that is not an array or object")
            }
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
