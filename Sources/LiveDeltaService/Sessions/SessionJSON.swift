import ByteJSON

extension JSONWriter {
    /// `"id", "version", "count"` and, for sections, `"sectionCount"` (no braces).
    mutating func sessionSummary(_ snapshot: SessionSnapshot) {
        member("id", first: true)
        string(snapshot.id)
        member("version")
        unsigned(UInt(snapshot.version))
        member("count")
        int(snapshot.collection.itemCount)
        if case .sectioned(let sections) = snapshot.collection.shape {
            member("sectionCount")
            int(sections.count)
        }
    }

    /// `"id", "version", "baseVersion"` after an answer's other members.
    mutating func versions(id: String, version: UInt64, baseVersion: UInt64) {
        member("id")
        string(id)
        member("version")
        unsigned(UInt(version))
        member("baseVersion")
        unsigned(UInt(baseVersion))
    }

    /// The options as a JSON object, every one spelled out.
    mutating func options(_ options: DiffOptions) {
        raw("{")
        member("idKey", first: true)
        string(options.idKey)
        member("sectionIdKey")
        string(options.sectionIdKey)
        member("itemsKey")
        string(options.itemsKey)
        member("unique")
        bool(options.unique)
        switch options.filter {
        case .allFields: break
        case .only(let keys):
            member("compareKeys")
            array(keys.keys) { writer, key in key.withUnsafeBufferPointer { writer.string(generalizedUTF8: $0) } }
        case .except(let keys):
            member("ignoreKeys")
            array(keys.keys) { writer, key in key.withUnsafeBufferPointer { writer.string(generalizedUTF8: $0) } }
        }
        member("dataCountAnimationThreshold")
        int(options.dataCountAnimationThreshold)
        member("deltaCountAnimationThreshold")
        int(options.deltaCountAnimationThreshold)
        member("includeDeletedItems")
        bool(options.includeDeletedItems)
        member("format")
        string(options.format.rawValue)
        member("changes")
        string(options.changes.rawValue)
        if !options.nested.isEmpty {
            member("nested")
            raw("{")
            for (index, (field, inner)) in options.nested.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { raw(",") }
                string(field)
                raw(":")
                self.options(inner)
            }
            raw("}")
        }
        raw("}")
    }
}
