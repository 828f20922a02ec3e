import ByteJSON
import MicroHTTP

/// Reads texts that operations carry (items, ids, whole documents) into items as a body's
/// collection would be read, with the session's options: one body is made of them all and read
/// once, and a refusal's pointer is moved back onto the operation the text came from.
struct ChangeReading {
    let options: DiffOptions
    let maxDepth: Int

    /// Items, one for each text; `origins[k]` is where text k came from. Ids are read this way
    /// too, as items that are their own id (which gives them the id a held item has).
    func items(_ texts: [UnsafeBufferPointer<UInt8>], origins: [JSONPointer]) throws(APIError) -> ([JSONItem], DocumentOwners) {
        try items(texts) { origins[$0] }
    }

    /// Items, one for each text; `origin(k)` says where text k came from, asked only for a
    /// refusal (finding it may cost a walk over the operations).
    /// Where the texts are items a patch wrote, `place(k)` is where text k stands in the session
    /// (see `moved`).
    func items(
        _ texts: [UnsafeBufferPointer<UInt8>], origin: (Int) -> JSONPointer, place: ((Int) -> Int)? = nil
    ) throws(APIError) -> ([JSONItem], DocumentOwners) {
        guard !texts.isEmpty else { return ([], DocumentOwners()) }
        var writer = JSONWriter(capacity: texts.reduce(16) { $0 + $1.count + 1 })
        writer.raw("{\"items\":[")
        for (index, text) in texts.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.raw(text)
        }
        writer.raw("]}")
        var reading = options
        // Occurrences are the operations' to say, not the order of these texts.
        reading.unique = true
        let collection = try read(writer.bytes, member: "items", options: reading, origin: origin, place: place)
        guard case .flat(let items) = collection.shape else { throw .internalError("items read as sections") }
        return (items, collection.owners)
    }

    /// The most item text one change's `changes` may rewrite together: twice the largest
    /// body. Each rewrites its item whole, so a body of small edits to one large item would
    /// otherwise hold a thread for as long as the edits times the item.
    static let maxRewrittenBytes = 64 << 20

    /// What an update's `changes` make of the item whose text is `old`: the new text, and it
    /// read as an item (refusals point at `origin`, the operation's `changes`). The old text is
    /// taken from `budget`, what the change's edits may still rewrite.
    func item(
        _ old: UnsafeBufferPointer<UInt8>, changedBy changes: FieldEdits, body: UnsafeBufferPointer<UInt8>, origin: JSONPointer,
        budget: inout Int
    ) throws(APIError) -> (item: JSONItem, text: [UInt8], owners: DocumentOwners) {
        guard old.count <= budget else {
            throw APIError(
                .invalidOperation,
                message:
                    "the changes of one request's updates rewrite at most \(Self.maxRewrittenBytes) bytes of items together; "
                    + "this one would go past that",
                pointer: origin.description)
        }
        budget -= old.count
        let text = try changes.applied(to: old, body: body)
        let (read, owners) = try text.withUnsafeBufferPointer { text throws(APIError) in try items([text], origins: [origin]) }
        guard let item = read.first else { throw .internalError("a changed item was not read") }
        return (item, text, owners)
    }

    /// A whole collection from its text as `SessionCodec` writes it (`[…]`, or
    /// `{"sections": […]}`): a session written anew into one document. Where the text is a
    /// patch's result, `place(k)` is where its element k stands in the session: a refusal then
    /// points at the operation (`origin(k)`) and its message names that place in the session.
    func collection(
        encoded text: [UInt8], sectioned: Bool, origin: (Int) -> JSONPointer = { _ in JSONPointer() }, place: ((Int) -> Int)? = nil
    ) throws(APIError) -> JSONCollection {
        guard !sectioned else { return try read(text, member: "sections", options: options, origin: origin, place: place) }
        var body: [UInt8] = Array("{\"items\":".utf8)
        body.append(contentsOf: text)
        body.append(UInt8(ascii: "}"))
        return try read(body, member: "items", options: options, origin: origin, place: place)
    }

    private func read(
        _ text: [UInt8], member: String, options: DiffOptions, origin: (Int) -> JSONPointer, place: ((Int) -> Int)? = nil
    ) throws(APIError) -> JSONCollection {
        do throws(APIError) {
            var envelope = try Envelope.read(
                ByteBuffer(text), members: member == "items" ? ["items": .items] : ["sections": .sections], readingWith: options,
                limits: ReadLimits(maxDepth: maxDepth + 2, maxItems: Int.max))
            var collections = try envelope.collections(readWith: options)
            // A patch may leave a document without the member (`remove /sections`, the root
            // replaced with `{}`): refused as the member's absence, like a body without it.
            guard let collection = collections.take(member) else {
                throw APIError.invalidShape(
                    JSONPointer(member),
                    member == "items"
                        ? "\"items\" must be an array of items" : "\"sections\" must be an array of section objects; the change would leave none")
            }
            return collection
        } catch {
            throw Self.moved(error, from: member, to: origin, place: place)
        }
    }

    /// A refusal whose pointer is `/member/k/rest`, pointed at `origin(k)` + `rest` instead:
    /// where the item came from in the body (a keyed operation's `item`). For a patch's result
    /// (`place`), the body holds operations, not items: the pointer is the operation alone, and
    /// the message names the place in the session, `/place(k)/rest` (under `/sections`).
    static func moved(_ error: APIError, from member: String, to origin: (Int) -> JSONPointer, place: ((Int) -> Int)? = nil) -> APIError {
        var moved = error
        guard let pointer = error.pointer, let tokens = PatchOperation.tokens(pointer), tokens.count >= 2,
            tokens[0] == Array(member.utf8), let index = Int(String(decoding: tokens[1], as: UTF8.self))
        else { return moved }
        let rest = tokens.dropFirst(2).map { String(decoding: $0, as: UTF8.self) }
        if let place {
            var path = member == "sections" ? JSONPointer("sections").appending(String(place(index))) : JSONPointer(String(place(index)))
            for token in rest { path = path.appending(token) }
            moved.pointer = origin(index).description
            moved.message =
                moved.message.contains(pointer)
                ? moved.message.replacingOccurrences(of: pointer, with: path.description) : "\(moved.message) (at \(path) in the session)"
            return moved
        }
        var target = origin(index)
        for token in rest { target = target.appending(token) }
        moved.pointer = target.description
        moved.message = moved.message.replacingOccurrences(of: pointer, with: target.description)
        return moved
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        let (text, target, replacement) = (Array(utf8), Array(target.utf8), Array(replacement.utf8))
        guard !target.isEmpty, text.count >= target.count else { return self }
        var result: [UInt8] = []
        var index = 0
        while index < text.count {
            if index + target.count <= text.count, text[index..<index + target.count].elementsEqual(target) {
                result += replacement
                index += target.count
            } else {
                result.append(text[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}

extension FieldEdits {
    /// An item's text with these edits: its members in their order, set ones given their new
    /// value, removed ones left out, new ones after them.
    func applied(to item: UnsafeBufferPointer<UInt8>, body: UnsafeBufferPointer<UInt8>) throws(APIError) -> [UInt8] {
        var scanner = JSONScanner(item, maxDepth: 1_000)
        scanner.hashing = false
        guard scanner.peek() == UInt8(ascii: "{") else {
            throw APIError(.invalidOperation, message: "changes apply to items that are objects; this item is not one")
        }
        var writer = JSONWriter(capacity: item.count + 64)
        writer.raw("{")
        var first = true
        var written = Set<[UInt8]>()
        // By name, in tables: an item and its edits may each name hundreds of thousands of
        // fields, and a search of the edits for each member would cost their product.
        let setAt = Dictionary(set.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        let removedNames = Set(removed)
        func member(_ name: [UInt8], _ value: UnsafeBufferPointer<UInt8>) {
            if !first { writer.raw(",") }
            first = false
            name.withUnsafeBufferPointer { writer.string(generalizedUTF8: $0) }
            writer.raw(":")
            writer.raw(value)
        }
        func text(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: body[range]) }
        do {
            var key = try scanner.beginObject()
            while let current = key {
                let name = scanner.decoded(current)
                scanner.skipWhitespace()
                let value = try scanner.scanValue()
                if let change = setAt[name] {
                    member(name, text(change))
                    written.insert(name)
                } else if !removedNames.contains(name) {
                    member(name, scanner.slice(value.start..<value.end))
                }
                key = try scanner.nextKey()
            }
        } catch {
            throw .internalError("a held item could not be read again: \(error)")
        }
        for change in set where !written.contains(change.name) { member(change.name, text(change.value)) }
        writer.raw("}")
        return writer.bytes
    }
}
