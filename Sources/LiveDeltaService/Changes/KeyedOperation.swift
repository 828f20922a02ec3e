import ByteJSON

/// One keyed operation, in the vocabulary `format: keyed` answers with, so that one server's
/// delta can be fed to another: items by id (`{"id", "occurrence"}` where ids repeat), and in a
/// sectioned session sections by id.
struct KeyedOperation {
    enum Kind: String, CaseIterable {
        case insert, update, move, remove
        case insertSection, updateSection, moveSection, removeSection

        var onSection: Bool {
            switch self {
            case .insertSection, .updateSection, .moveSection, .removeSection: true
            case .insert, .update, .move, .remove: false
            }
        }
    }

    /// Where `before` says to put an item or section.
    enum Place {
        /// No `before` (or null): at the end.
        case end
        case before(ItemKey)
    }

    let kind: Kind
    let pointer: JSONPointer
    let id: ItemKey
    let place: Place
    /// Item operations in a sectioned session: the section's id. Section operations: the
    /// section itself (`insertSection`, `updateSection`).
    let section: Range<Int>?
    let item: Range<Int>?
    let changes: FieldEdits?
    /// `insertSection` where ids repeat: the keys its items go by.
    let keys: [ItemKey]?

    init(_ scanner: inout JSONScanner, at pointer: JSONPointer) throws(APIError) {
        self.pointer = pointer
        let members = try OperationMembers(&scanner, at: pointer, what: "an operation")
        let allowed: Set<String> = ["op", "id", "before", "section", "item", "changes", "keys"]
        if let unknown = members.names.first(where: { !allowed.contains($0) }) {
            let reason =
                unknown == "nested"
                ? "nested deltas are not taken as input; send the item's new list field in \"changes\".set or the whole \"item\""
                : "unknown member \"\(unknown)\"; an operation takes op, id, before, section, item, changes, keys"
            throw APIError(.invalidOperation, message: reason, pointer: pointer.appending(unknown).description)
        }
        guard let op = members["op"].flatMap(scanner.string), let kind = Kind(rawValue: op) else {
            throw APIError(
                .invalidOperation, message: "op must be one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))",
                pointer: pointer.appending("op").description)
        }
        self.kind = kind
        func invalid(_ member: String, _ message: String) -> APIError {
            APIError(.invalidOperation, message: message, pointer: pointer.appending(member).description)
        }
        guard let id = members["id"] else { throw invalid("id", "\(op) needs the id of the \(kind.onSection ? "section" : "item")") }
        self.id = try ItemKey(id, in: scanner, at: pointer.appending("id"))
        if let before = members["before"], before.kind != .null {
            guard kind == .insert || kind == .move || kind == .insertSection || kind == .moveSection else {
                throw invalid("before", "\(op) takes no before")
            }
            place = .before(try ItemKey(before, in: scanner, at: pointer.appending("before")))
        } else {
            place = .end
        }
        section = members["section"]?.range
        item = members["item"]?.range
        switch kind {
        case .insert, .move:
            break
        case .update:
            guard (members["item"] == nil) != (members["changes"] == nil) else {
                throw invalid("item", "update takes the whole new \"item\" or its \"changes\", one of them")
            }
        case .insertSection, .updateSection:
            guard members["section"]?.kind == .object else { throw invalid("section", "\(op) needs the section, an object") }
        case .remove, .moveSection, .removeSection:
            break
        }
        if kind == .insert && members["item"] == nil { throw invalid("item", "insert needs the item") }
        if members["item"] != nil && kind != .insert && kind != .update { throw invalid("item", "\(op) takes no item") }
        if members["changes"] != nil && kind != .update { throw invalid("changes", "\(op) takes no changes") }
        if members["keys"] != nil && kind != .insertSection { throw invalid("keys", "\(op) takes no keys") }
        changes = try members["changes"].map { changes throws(APIError) in try FieldEdits(changes, in: scanner, at: pointer.appending("changes")) }
        if let keys = members["keys"] {
            guard keys.kind == .array else { throw invalid("keys", "keys must be a list of item keys") }
            var inner = scanner
            inner.position = keys.start
            var list: [ItemKey] = []
            var more = try json { () throws(JSONError) in try inner.beginArray() }
            while more {
                inner.skipWhitespace()
                let value = try json { () throws(JSONError) in try inner.scanValue() }
                list.append(try ItemKey(value, in: inner, at: pointer.appending("keys").appending(list.count)))
                more = try json { () throws(JSONError) in try inner.nextElement() }
            }
            self.keys = list
        } else {
            keys = nil
        }
    }
}

/// An item's key as an operation names it: its id (as JSON text in the body), and its
/// occurrence where ids repeat (`{"id": …, "occurrence": n}`).
struct ItemKey {
    let id: Range<Int>
    let occurrence: UInt32?
    let pointer: JSONPointer

    init(_ value: ScannedValue, in scanner: JSONScanner, at pointer: JSONPointer) throws(APIError) {
        self.pointer = pointer
        guard value.kind == .object else {
            id = value.range
            occurrence = nil
            return
        }
        var inner = scanner
        inner.position = value.start
        let members = try OperationMembers(&inner, at: pointer, what: "a key")
        guard let id = members["id"], let number = members["occurrence"], members.names.count == 2,
            case .number(let count) = try json({ () throws(JSONError) in try JSONValue(parsing: inner.slice(number.range)) }),
            let occurrence = count.nonNegativeInt,
            (1...Int(UInt32.max)).contains(occurrence)
        else {
            throw APIError(
                .invalidOperation, message: "a key is an id, or {\"id\": …, \"occurrence\": n} with n from 1 where ids repeat",
                pointer: pointer.description)
        }
        self.id = id.range
        self.occurrence = UInt32(occurrence)
    }
}

/// `changes` of an update, as `changes: "fields"` spells them: `{"set": {name: value}, "removed": [name]}`.
struct FieldEdits {
    var set: [(name: [UInt8], value: Range<Int>)] = []
    var removed: [[UInt8]] = []

    init(_ value: ScannedValue, in scanner: JSONScanner, at pointer: JSONPointer) throws(APIError) {
        var inner = scanner
        inner.position = value.start
        let members = try OperationMembers(&inner, at: pointer, what: "changes")
        if let unknown = members.names.first(where: { $0 != "set" && $0 != "removed" }) {
            throw APIError(.invalidOperation, message: "changes take \"set\" and \"removed\"", pointer: pointer.appending(unknown).description)
        }
        if let set = members["set"] {
            guard set.kind == .object else {
                throw APIError(.invalidOperation, message: "set must be an object of fields", pointer: pointer.appending("set").description)
            }
            inner.position = set.start
            // Names seen, in a table: a body may set hundreds of thousands of fields.
            var names = Set<[UInt8]>()
            var key = try json { () throws(JSONError) in try inner.beginObject() }
            while let current = key {
                let name = inner.decoded(current)
                inner.skipWhitespace()
                let field = try json { () throws(JSONError) in try inner.scanValue() }
                if !names.insert(name).inserted {
                    throw APIError.duplicateMember(pointer.appending("set").appending(inner.text(current)))
                }
                self.set.append((name, field.range))
                key = try json { () throws(JSONError) in try inner.nextKey() }
            }
        }
        if let removed = members["removed"] {
            guard case .array(let names) = try json({ () throws(JSONError) in try JSONValue(parsing: inner.slice(removed.range)) }),
                names.allSatisfy({ $0.stringValue != nil })
            else {
                throw APIError(.invalidOperation, message: "removed must be a list of field names", pointer: pointer.appending("removed").description)
            }
            self.removed = names.compactMap { if case .string(let bytes) = $0 { bytes } else { nil } }
        }
    }
}

extension JSONScanner {
    /// The text of a range of the scanner's bytes.
    func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base + range.lowerBound, count: range.count) }
}
