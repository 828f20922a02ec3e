/// The ids a change's operations name, gathered to be read as items in one pass
/// (`ChangeReading.items`), each with where it came from and the occurrence it stands for.
struct NamedKeys {
    private var texts: [UnsafeBufferPointer<UInt8>] = []
    private var origins: [JSONPointer] = []
    private var occurrences: [UInt32] = []

    /// Adds `key` as written in `body`, and answers its index; `occurrence` is what it stands
    /// for (0 where ids are unique or for a section).
    mutating func add(_ key: ItemKey, in body: ChangeBody, occurrence: UInt32) -> Int {
        texts.append(body.text(key.id))
        origins.append(key.occurrence == nil ? key.pointer : key.pointer.appending("id"))
        occurrences.append(occurrence)
        return texts.count - 1
    }

    /// The keys read as items, each with its occurrence, and the documents they point into.
    func read(with reading: ChangeReading) throws(APIError) -> ([JSONItem], DocumentOwners) {
        var (keys, owners) = try reading.items(texts, origins: origins)
        for index in keys.indices { keys[index].occurrence = occurrences[index] }
        return (keys, owners)
    }
}
