/// Works out the parts (`PartPlan`) a commit stores: a collection whole, or what a change
/// rewrites of the parts already stored.
///
/// A unit (an item, or a section) is unchanged where its text is the very text the stored part
/// was written from: same address, same length. The caller keeps the old collection's
/// documents alive meanwhile, so no new text can take an old one's address. A stored part is
/// kept where all its units follow each other unchanged in the new collection; every other unit
/// goes into new parts. Finding them costs a lookup per part and per unit not in a kept part,
/// and a comparison of addresses per unit kept, except where the change says which runs of
/// units it copied as they were (`CopiedRun`): a part inside one is kept on that word. For a
/// one-item edit of a million items, the comparisons were about a third of the commit's CPU
/// (reading both lists, 80 MB).
enum PartPlanner {
    /// The size a part aims at: a change rewrites about this much text for each part it
    /// touches, and each commit names every part (a collection's bytes over this many) in its
    /// manifest. Smaller parts make each commit's part list longer; larger ones make edits
    /// spread over a long list costly where it is followed: Redis logs each part rewritten and
    /// the one it replaced in one stream entry, and a 6.5 MB entry (100 items updated across a
    /// million, with 32 KB parts) cost Redis about 40 ms of CPU a commit, against 8 ms for
    /// 1.7 MB with 8 KB parts (`make bench-windows`: such a commit's answer went from about 67
    /// to 33 ms, docs/performance.md). A one-item edit logs some 94 KB, the part lists
    /// included, against 83 KB.
    static let targetBytes = 8 * 1024

    /// The collection in new parts, every one written.
    static func whole(_ collection: JSONCollection, naming prefix: String = "") -> PartPlan {
        change(from: nil, stored: [], to: collection, naming: prefix)
    }

    /// The parts that take storage from `old`, stored as `stored`, to `new`. New parts are
    /// named `prefix` and a number, so the prefix must be one no stored part's name starts with
    /// (the new version's number does: versions only grow within a life).
    /// `copied`: runs of `new`'s items that are `old`'s copied as they were (a flat list's).
    static func change(
        from old: JSONCollection?, stored: [StoredPart], to new: JSONCollection, naming prefix: String, copied: [CopiedRun] = []
    ) -> PartPlan {
        var parts = units(from: old, stored: stored, to: new, naming: prefix, copied: copied)
        parts.items = new.itemCount
        return parts
    }

    private static func units(
        from old: JSONCollection?, stored: [StoredPart], to new: JSONCollection, naming prefix: String, copied: [CopiedRun]
    ) -> PartPlan {
        switch (old?.shape, new.shape) {
        case (.flat(let before), .flat(let after)):
            plan(before, stored, after, shape: .flat, prefix, copied: copied)
        case (.sectioned(let before), .sectioned(let after)):
            plan(before, stored, after, shape: .sectioned, prefix)
        case (_, .flat(let after)):
            plan([], [], after, shape: .flat, prefix)
        case (_, .sectioned(let after)):
            plan([], [], after, shape: .sectioned, prefix)
        }
    }

    private enum Piece {
        /// A stored part, by its index.
        case kept(Int)
        /// New units, by their range in the new collection, and the bytes of their text.
        case fresh(Range<Int>, bytes: Int)
    }

    private static func plan<Unit: StoredUnit>(
        _ old: [Unit], _ stored: [StoredPart], _ new: [Unit], shape: StoredShape, _ prefix: String, copied: [CopiedRun] = []
    ) -> PartPlan {
        // Stored parts that do not add up to the old units say nothing about them: none is kept.
        let stored = adds(stored, up: old.count) ? stored : []
        var starts: [Int] = []
        var firsts: [Int: Int] = [:]
        starts.reserveCapacity(stored.count)
        firsts.reserveCapacity(stored.count)
        var offset = 0
        for (index, part) in stored.enumerated() {
            starts.append(offset)
            firsts[address(old[offset])] = index
            offset += part.count
        }
        var used = [Bool](repeating: false, count: stored.count)
        var pieces: [Piece] = []
        let runs = copied.sorted { $0.old < $1.old }

        /// Whether the units from `start` are copied as they were to `position` on, `count` of them.
        func copiedWhole(_ start: Int, _ count: Int, to position: Int) -> Bool {
            var (low, high) = (0, runs.count)
            while low < high {
                let middle = (low + high) / 2
                if runs[middle].old <= start { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return false }
            let run = runs[low - 1]
            return start + count <= run.old + run.count && position - run.new == start - run.old
        }

        func unchanged(_ part: Int, at position: Int) -> Bool {
            let (start, count) = (starts[part], stored[part].count)
            guard position + count <= new.count else { return false }
            if copiedWhole(start, count, to: position) { return true }
            for offset in 0..<count where !same(old[start + offset], new[position + offset]) { return false }
            return true
        }

        /// Puts the units in `range` into new parts of about `targetBytes`, taking in the part
        /// kept just before where it is small, so that small parts do not pile up.
        func flush(_ range: Range<Int>) {
            guard !range.isEmpty else { return }
            var lower = range.lowerBound
            if case .kept(let part) = pieces.last, stored[part].bytes < targetBytes / 2 {
                pieces.removeLast()
                used[part] = false
                lower -= stored[part].count
            }
            var (start, bytes) = (lower, -1)
            for index in lower..<range.upperBound {
                bytes += new[index].text.count + 1
                if bytes >= targetBytes {
                    pieces.append(.fresh(start..<index + 1, bytes: bytes))
                    (start, bytes) = (index + 1, -1)
                }
            }
            guard start < range.upperBound else { return }
            if bytes < targetBytes / 4, case .fresh(let previous, let previousBytes) = pieces.last, previous.upperBound == start {
                pieces[pieces.count - 1] = .fresh(previous.lowerBound..<range.upperBound, bytes: previousBytes + 1 + bytes)
            } else {
                pieces.append(.fresh(start..<range.upperBound, bytes: bytes))
            }
        }

        var (pending, position) = (0, 0)
        while position < new.count {
            guard let part = firsts[address(new[position])], !used[part], unchanged(part, at: position) else {
                position += 1
                continue
            }
            // A small part among new units is rewritten with them.
            if stored[part].bytes < targetBytes / 2, pending < position {
                position += stored[part].count
                continue
            }
            flush(pending..<position)
            pieces.append(.kept(part))
            used[part] = true
            position += stored[part].count
            pending = position
        }
        flush(pending..<new.count)

        return assemble(pieces, stored: stored, used: used, new: new, shape: shape, prefix)
    }

    /// The parts the pieces make: kept ones as stored, fresh ones named and written; the stored
    /// parts not used are removed.
    private static func assemble<Unit: StoredUnit>(
        _ pieces: [Piece], stored: [StoredPart], used: [Bool], new: [Unit], shape: StoredShape, _ prefix: String
    ) -> PartPlan {
        var parts = PartPlan(shape: shape, manifest: [], written: [], removed: [])
        parts.manifest.reserveCapacity(pieces.count)
        for piece in pieces {
            switch piece {
            case .kept(let part): parts.manifest.append(stored[part])
            case .fresh(let range, let bytes):
                let name = prefix + String(parts.written.count, radix: 36)
                parts.manifest.append(StoredPart(name: name, count: range.count, bytes: bytes))
                parts.written.append((name, text(of: new[range])))
                parts.writtenIDs.append(idHashes(of: new[range]))
            }
        }
        parts.removed = zip(stored, used).filter { !$0.1 }.map(\.0.name)
        return parts
    }

    /// A collection's shape, and its units' text joined by commas in pieces where it lies (valid
    /// while the collection's documents are).
    static func text(of collection: JSONCollection) -> (StoredShape, [UnsafeRawBufferPointer]) {
        switch collection.shape {
        case .flat(let items): (.flat, text(of: items))
        case .sectioned(let sections): (.sectioned, text(of: sections))
        }
    }

    /// Units' text joined by commas, in pieces where it lies.
    private static func text<Units: Collection>(of units: Units) -> [UnsafeRawBufferPointer] where Units.Element: StoredUnit {
        var pieces: [UnsafeRawBufferPointer] = []
        pieces.reserveCapacity(units.count * 2)
        for unit in units {
            if !pieces.isEmpty { pieces.append(comma) }
            pieces.append(UnsafeRawBufferPointer(unit.text))
        }
        return pieces
    }

    /// Units' id hashes (`StoredUnit.stableIDHash`), 32 bits little-endian each.
    private static func idHashes<Units: Collection>(of units: Units) -> [UInt8] where Units.Element: StoredUnit {
        // Written in place, with no closure around a captured array: one that appended to it
        // had the runtime check exclusive access at every unit.
        [UInt8](unsafeUninitializedCapacity: units.count * 4) { buffer, written in
            written = 0
            for unit in units {
                let hash = unit.stableIDHash
                for shift in stride(from: 0, to: 32, by: 8) {
                    buffer[written] = UInt8(truncatingIfNeeded: hash >> UInt32(shift))
                    written += 1
                }
            }
        }
    }

    private static var comma: UnsafeRawBufferPointer {
        let text: StaticString = ","
        return UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }

    private static func address(_ unit: some StoredUnit) -> Int { Int(bitPattern: unit.text.baseAddress) }

    private static func same<Unit: StoredUnit>(_ a: Unit, _ b: Unit) -> Bool {
        let (first, second) = (a.text, b.text)
        return first.baseAddress == second.baseAddress && first.count == second.count
    }

    /// The bytes of each stored part's text, counted from the units it holds; nil where the
    /// parts do not add up to the collection's units.
    static func counted(_ parts: [StoredPart], in collection: JSONCollection) -> [StoredPart]? {
        switch collection.shape {
        case .flat(let items): adds(parts, up: items.count) ? counted(parts, items) : nil
        case .sectioned(let sections): adds(parts, up: sections.count) ? counted(parts, sections) : nil
        }
    }

    /// Whether the parts, none empty, hold `count` units.
    private static func adds(_ parts: [StoredPart], up count: Int) -> Bool {
        parts.allSatisfy { $0.count > 0 } && parts.reduce(0) { $0 + $1.count } == count
    }

    private static func counted<Unit: StoredUnit>(_ parts: [StoredPart], _ units: [Unit]) -> [StoredPart] {
        var offset = 0
        return parts.map { part in
            var part = part
            part.bytes = units[offset..<offset + part.count].reduce(-1) { $0 + $1.text.count + 1 }
            offset += part.count
            return part
        }
    }
}

/// What a stored part holds: an item of a flat list, or a section.
protocol StoredUnit {
    var text: UnsafeBufferPointer<UInt8> { get }
    /// Its id's hash as every replica computes it (occurrences left out: windows are anchored
    /// by id only where ids are unique).
    var stableIDHash: UInt32 { get }
}

extension JSONItem: StoredUnit {}
extension JSONSection: StoredUnit {}
