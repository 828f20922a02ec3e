import ByteJSON

/// A change's keyed operations resolved into instructions, for a flat or a sectioned session alike:
/// what each names (its id, the one it goes before, its section, its item) as indices into
/// keys and items read together, once, as a body's items would be.
struct KeyedInstructions {
    /// One operation, resolved.
    struct Instruction {
        let operation: KeyedOperation
        /// Indices into `keys`.
        var id: Int
        var before: Int?
        var section: Int?
        /// Index into `items`.
        var item: Int?
        /// insertSection: its items' indices in `items`, and their keys where given.
        var rows: Range<Int> = 0..<0
        var rowKeys: [Int]?
    }

    let keys: [JSONItem]
    let items: [JSONItem]
    let instructions: [Instruction]
    /// The documents the keys point into: they are only looked up, so they live as long as the
    /// edit, not the session.
    let keyOwners: DocumentOwners
    /// The documents the items point into.
    let itemOwners: DocumentOwners

    /// Resolves `operations`, refusing what the session's shape cannot take: section
    /// operations and `section` members on a flat list; an item's insert or move naming no
    /// section in a sectioned one.
    init(_ operations: [KeyedOperation], body: ChangeBody, reading: ChangeReading, sectioned: Bool) throws(APIError) {
        let unique = reading.options.unique
        var named = NamedKeys()
        // Sections go by their id alone; items by id and occurrence where ids repeat.
        func key(_ key: ItemKey, item: Bool) throws(APIError) -> Int {
            if unique || !item, key.occurrence != nil {
                throw APIError(
                    .invalidOperation,
                    message: item ? "this session's ids are unique: a key is an id, with no occurrence" : "sections go by their id alone",
                    pointer: key.pointer.description)
            }
            return named.add(key, in: body, occurrence: unique || !item ? 0 : key.occurrence ?? 1)
        }
        var texts = ItemTexts()
        var instructions: [Instruction] = []
        for operation in operations {
            try Self.check(operation, sectioned: sectioned)
            let onSection = operation.kind.onSection
            var instruction = Instruction(operation: operation, id: try key(operation.id, item: !onSection))
            if case .before(let place) = operation.place { instruction.before = try key(place, item: !onSection) }
            if !onSection, let range = operation.section {
                instruction.section = try key(try Self.sectionKey(range, operation, body: body), item: false)
            }
            if (operation.kind == .insert || operation.kind == .move) && instruction.section == nil && sectioned {
                throw APIError(
                    .invalidOperation, message: "in a sectioned session, \(operation.kind.rawValue) names the section the item goes to",
                    pointer: operation.pointer.appending("section").description)
            }
            if let range = operation.item { instruction.item = texts.add(body.text(range), from: operation.pointer.appending("item")) }
            if operation.kind == .insertSection, let range = operation.section {
                let start = texts.count
                let count = try texts.addItems(of: body.text(range), operation, itemsKey: reading.options.itemsKey)
                instruction.rows = start..<texts.count
                if let keys = operation.keys {
                    guard keys.count == count else {
                        throw APIError(
                            .invalidOperation, message: "keys must name each of the section's \(count) items",
                            pointer: operation.pointer.appending("keys").description)
                    }
                    instruction.rowKeys = try keys.map { row throws(APIError) in try key(row, item: true) }
                }
            }
            instructions.append(instruction)
        }
        (keys, keyOwners) = try named.read(with: reading)
        (items, itemOwners) = try reading.items(texts.texts, origins: texts.origins)
        self.instructions = instructions
    }

    /// Refuses on a flat list what only a sectioned session takes.
    private static func check(_ operation: KeyedOperation, sectioned: Bool) throws(APIError) {
        guard !sectioned else { return }
        if operation.kind.onSection {
            throw APIError(
                .invalidOperation, message: "this session holds a flat list: \(operation.kind.rawValue) needs a sectioned session",
                pointer: operation.pointer.appending("op").description)
        }
        if operation.section != nil {
            throw APIError(
                .invalidOperation, message: "this session holds a flat list: items name no section",
                pointer: operation.pointer.appending("section").description)
        }
    }

    /// The `section` member of an item operation: the id of the section it names.
    private static func sectionKey(_ range: Range<Int>, _ operation: KeyedOperation, body: ChangeBody) throws(APIError) -> ItemKey {
        var scanner = JSONScanner(body.body.bytes, maxDepth: 8)
        scanner.position = range.lowerBound
        let value = try json { () throws(JSONError) in try scanner.scanValue() }
        return try ItemKey(value, in: scanner, at: operation.pointer.appending("section"))
    }

    /// The item an instruction puts in the list, refused where its id is not the instruction's:
    /// the item the operation carries, or for an update by `changes`, the current item's text
    /// `old` with them (`budget` is what the change's edits may still rewrite); `owners` is the
    /// document a rewritten item's text lives in.
    func item(
        of instruction: Instruction, replacing old: UnsafeBufferPointer<UInt8>?, body: ChangeBody, reading: ChangeReading, budget: inout Int
    ) throws(APIError) -> (item: JSONItem, owners: DocumentOwners?) {
        let operation = instruction.operation
        if let index = instruction.item {
            guard items[index].plainID == keys[instruction.id].plainID else {
                throw APIError(
                    .invalidOperation,
                    message: operation.kind == .insert
                        ? "the item's id is not the operation's id \(keys[instruction.id].uniqueID.description)"
                        : "an update cannot change the item's id \(keys[instruction.id].uniqueID.description)",
                    pointer: operation.pointer.appending("item").description)
            }
            return (items[index], nil)
        }
        guard let changes = operation.changes, let old else { throw .internalError("an update with neither item nor changes was read") }
        let changed = try reading.item(
            old, changedBy: changes, body: body.body.bytes, origin: operation.pointer.appending("changes"), budget: &budget)
        guard changed.item.plainID == keys[instruction.id].plainID else {
            throw APIError(
                .invalidOperation, message: "an update cannot change the item's id \(keys[instruction.id].uniqueID.description)",
                pointer: operation.pointer.appending("changes").description)
        }
        return (changed.item, changed.owners)
    }
}

/// The item texts operations carry, with where each came from, to be read together.
private struct ItemTexts {
    var texts: [UnsafeBufferPointer<UInt8>] = []
    var origins: [JSONPointer] = []

    var count: Int { texts.count }

    mutating func add(_ text: UnsafeBufferPointer<UInt8>, from origin: JSONPointer) -> Int {
        texts.append(text)
        origins.append(origin)
        return texts.count - 1
    }

    /// Adds the items of a section an operation inserts (`section`, its text); answers how many
    /// elements its items array has.
    mutating func addItems(of section: UnsafeBufferPointer<UInt8>, _ operation: KeyedOperation, itemsKey: String) throws(APIError) -> Int {
        var value = LazyJSON.text(section)
        value.open()
        guard case .object(let members) = value, let rows = members[Array(itemsKey.utf8)] else {
            throw APIError(
                .invalidOperation, message: "the section needs its items under \"\(itemsKey)\"",
                pointer: operation.pointer.appending("section").description)
        }
        var list = rows
        list.open()
        guard case .array(let elements) = list else {
            throw APIError(
                .invalidOperation, message: "the section's \"\(itemsKey)\" must be an array",
                pointer: operation.pointer.appending("section").appending(itemsKey).description)
        }
        for (index, element) in elements.enumerated() {
            guard case .text(let text) = element else { continue }
            _ = add(text, from: operation.pointer.appending("section").appending(itemsKey).appending(index))
        }
        return elements.count
    }
}
