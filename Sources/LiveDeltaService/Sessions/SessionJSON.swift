import ByteJSON
import LiveCollections

extension JSONWriter {
    /// `"id", "version", "count"` and, for sections, `"sectionCount"` (no braces); `rows`, the
    /// session's counts of rows and items, for a snapshot of some of its rows.
    mutating func sessionSummary(_ snapshot: SessionSnapshot, rows: (count: Int, items: Int)? = nil) {
        member("id", first: true)
        string(String(SessionNamespace.shown(snapshot.id)))
        member("version")
        unsigned(UInt(snapshot.version))
        member("count")
        int(rows?.items ?? snapshot.collection.itemCount)
        if case .sectioned(let sections) = snapshot.collection.shape {
            member("sectionCount")
            int(rows?.count ?? sections.count)
        }
    }

    /// `"id", "version", "baseVersion"` after an answer's other members.
    mutating func versions(id: String, version: UInt64, baseVersion: UInt64) {
        member("id")
        string(String(SessionNamespace.shown(id)))
        member("version")
        unsigned(UInt(version))
        member("baseVersion")
        unsigned(UInt(baseVersion))
    }

    /// A change's members (no braces): its delta spelled as `spelling` says, its versions, and
    /// what `carried` says of the collection after it (`items` or `sections` whole, or a flat
    /// delta's inserted and changed `rows`).
    mutating func outcome(
        _ outcome: SessionChange.Outcome, id: String, includeDeleted: Bool, spelling: DeltaSpelling, carrying carried: CarriedCollection
    ) throws(APIError) {
        switch outcome {
        case .flat(let update, let old, let new):
            flatChange(
                update, old: ItemRows(old), new: ItemRows(new), id: id, includeDeleted: includeDeleted, spelling: spelling, carrying: carried)
        case .sectioned(let update, let old, let new):
            try sectionedMembers(
                sectionAnimation: update.sectionAnimation, itemAnimation: update.itemAnimation, sectionDelta: update.sectionDelta,
                itemDelta: update.itemDelta, spelling: spelling, old: old, new: new,
                deletedItems: includeDeleted ? update.deletedItems : nil)
            versions(id: id, version: update.version, baseVersion: update.baseVersion)
            if carried != .none {
                member("sections")
                array(new) { writer, section in writer.raw(section.text) }
            }
        }
    }

    /// A flat change's members (no braces), as `outcome` writes them, from `old` rows to `new`.
    mutating func flatChange(
        _ update: CollectionUpdate<JSONItem>, old: ItemRows, new: ItemRows, id: String, includeDeleted: Bool, spelling: DeltaSpelling,
        carrying carried: CarriedCollection
    ) {
        flatMembers(
            animation: update.animation, delta: update.delta, spelling: spelling, old: old, new: new,
            deletedItems: includeDeleted ? update.deletedItems : nil)
        versions(id: id, version: update.version, baseVersion: update.baseVersion)
        if carried == .changedRows, let delta = update.delta {
            member("rows")
            items(ChangedRows.of(delta, format: spelling.format, oldCount: old.count, in: new))
        } else if carried != .none {
            // A delta over the thresholds is no delta: the rows whole.
            member("items")
            items(new)
        }
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

extension SessionSnapshot {
    /// The session as `GET /sessions/{id}` answers it: summary, options and collection.
    var json: [UInt8] {
        var writer = JSONWriter(capacity: 256 + 128 * collection.itemCount)
        writer.raw("{")
        writer.sessionSummary(self)
        writer.member("options")
        writer.options(options)
        switch collection.shape {
        case .flat(let items):
            writer.member("items")
            writer.items(items)
        case .sectioned(let sections):
            writer.member("sections")
            writer.array(sections) { writer, section in writer.raw(section.text) }
        }
        writer.raw("}")
        return writer.bytes
    }
}

extension SessionChange {
    /// The change as an update answers it, its delta spelled as `spelling` says; with what
    /// `carried` says of the collection after it (`items` or `sections` whole, or a flat
    /// delta's inserted and changed `rows`).
    func json(spelling: DeltaSpelling, carrying carried: CarriedCollection = .none) throws(APIError) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        try writer.outcome(outcome, id: id, includeDeleted: options.includeDeletedItems, spelling: spelling, carrying: carried)
        writer.raw("}")
        return writer.bytes
    }

    /// The version this change started from.
    var baseVersion: UInt64 {
        switch outcome {
        case .flat(let update, _, _): update.baseVersion
        case .sectioned(let update, _, _): update.baseVersion
        }
    }

    /// The session after the change.
    var after: SessionSnapshot {
        let collection: JSONCollection =
            switch outcome {
            case .flat(_, _, let new): .flat(new, owners: owners)
            case .sectioned(_, _, let new): .sectioned(new, owners: owners)
            }
        return SessionSnapshot(id: id, incarnation: incarnation, options: options, version: version, collection: collection)
    }
}
