import MicroHTTP
import PropertyBased
import Testing

@testable import LiveDeltaService

/// A shared store keeps a collection in parts and rewrites, at each change, only the parts the
/// change touched: what the parts hold after each plan must join into the new collection.
@Suite struct PartPlannerTests {
    /// Items `{"id":n,"p":"…"}` of about `size` bytes each, parsed from one document.
    static func items(_ ids: some Sequence<Int>, size: Int, tag: String = "") throws -> JSONCollection {
        let pad = String(repeating: "x", count: max(0, size - 20))
        return try CollectionDocument.read(
            ByteBuffer(Array(("[" + ids.map { "{\"id\":\($0),\"p\":\"\(tag)\(pad)\"}" }.joined(separator: ",") + "]").utf8)))
    }

    static func flat(_ collection: JSONCollection) -> [JSONItem] {
        if case .flat(let items) = collection.shape { items } else { [] }
    }

    /// The runs of `new` that are `old`'s items copied as they were (same text), found by
    /// address: what an edit that copies says of its list (`CopiedRun`).
    static func copiedRuns(from old: [JSONItem], to new: [JSONItem]) -> [CopiedRun] {
        var at: [Int: Int] = [:]
        for (index, item) in old.enumerated() { at[Int(bitPattern: item.text.baseAddress)] = index }
        var runs: [CopiedRun] = []
        for (position, item) in new.enumerated() {
            guard let index = at[Int(bitPattern: item.text.baseAddress)], old[index].text.count == item.text.count else { continue }
            if let last = runs.last, last.old + last.count == index, last.new + last.count == position {
                runs[runs.count - 1] = CopiedRun(old: last.old, new: last.new, count: last.count + 1)
            } else {
                runs.append(CopiedRun(old: index, new: position, count: 1))
            }
        }
        return runs
    }

    /// What storage would hold: each part's text by name, and the manifest.
    struct Storage {
        var texts: [String: [UInt8]] = [:]
        var manifest: [StoredPart] = []
        var written = 0

        /// Takes a commit's parts, checking that it drops and keeps only parts it has.
        mutating func commit(_ parts: PartPlan) {
            let kept = Set(parts.manifest.map(\.name)).subtracting(parts.written.map(\.name))
            let before = Set(manifest.map(\.name))
            #expect(kept.isSubset(of: before) && Set(parts.removed).isSubset(of: before) && kept.isDisjoint(with: parts.removed))
            #expect(kept.union(parts.removed) == before || parts.whole)
            if parts.whole { texts = [:] }
            for name in parts.removed { texts[name] = nil }
            for (name, pieces) in parts.written {
                #expect(texts[name] == nil, "a new part takes a stored part's name: \(name)")
                texts[name] = pieces.flatMap { Array($0) }
            }
            manifest = parts.manifest
            written = parts.writtenBytes
        }

        var joined: [UInt8] {
            Array("[".utf8) + Array(manifest.map { texts[$0.name] ?? [] }.joined(separator: Array(",".utf8))) + Array("]".utf8)
        }
    }

    @Test func partsKeptAndWrittenJoinIntoEachNewCollection() async throws {
        await propertyCheck(count: 100, input: Gen.int(in: 0..<600), Gen.int(in: 0...1_000_000).array(of: 1...25), Gen.int(in: 20...1_500)) {
            count, edits, size in
            var current = try Self.items(0..<count, size: size)
            var storage = Storage()
            storage.commit(PartPlanner.whole(current))
            #expect(storage.joined == SessionCodec.encode(current))
            var nextID = count
            for (step, edit) in edits.enumerated() {
                var list = Self.flat(current)
                let at = list.isEmpty ? 0 : (edit / 8) % list.count
                let fresh = try Self.items(nextID..<nextID + 1 + edit % 40, size: size, tag: "\(step)")
                switch edit % 6 {
                case 0: list.insert(Self.flat(fresh)[0], at: (edit / 8) % (list.count + 1))
                case 1: if !list.isEmpty { list.remove(at: at) }
                case 2:
                    if !list.isEmpty {
                        let item = list.remove(at: at)
                        list.insert(item, at: (edit / 64) % (list.count + 1))
                    }
                case 3: if !list.isEmpty { list[at] = Self.flat(fresh)[0] }
                case 4: list += Self.flat(fresh)
                default: if !list.isEmpty { list.removeSubrange(at..<min(list.count, at + 1 + edit % 50)) }
                }
                nextID += 1 + edit % 40
                let next = JSONCollection.flat(list, owners: current.owners.merging(fresh.owners))
                let parts = PartPlanner.change(from: current, stored: storage.manifest, to: next, naming: String(step, radix: 36) + ".")
                // Told which runs are copies, it keeps and writes the very same parts.
                let told = PartPlanner.change(
                    from: current, stored: storage.manifest, to: next, naming: String(step, radix: 36) + ".",
                    copied: Self.copiedRuns(from: Self.flat(current), to: list))
                #expect(told.manifest == parts.manifest && told.removed == parts.removed)
                #expect(told.written.map(\.name) == parts.written.map(\.name), "step \(step), edit \(edit)")
                storage.commit(parts)
                #expect(storage.joined == SessionCodec.encode(next), "step \(step), edit \(edit)")
                #expect(parts.manifest.reduce(0) { $0 + $1.count } == list.count && parts.manifest.allSatisfy { $0.count > 0 })
                #expect(parts.manifest.allSatisfy { $0.bytes == storage.texts[$0.name]?.count })
                current = next
            }
        }
    }

    @Test func aOneItemChangeRewritesAboutOnePart() throws {
        let size = 100
        var current = try Self.items(0..<20_000, size: size)
        var storage = Storage()
        storage.commit(PartPlanner.whole(current))
        let parts = storage.manifest.count
        #expect(parts > 40)
        for (step, at) in [10_000, 0, 19_999, 5_432].enumerated() {
            var list = Self.flat(current)
            let fresh = try Self.items([at], size: size, tag: "new")
            list[at] = Self.flat(fresh)[0]
            let next = JSONCollection.flat(list, owners: current.owners.merging(fresh.owners))
            let plan = PartPlanner.change(from: current, stored: storage.manifest, to: next, naming: "\(step).")
            storage.commit(plan)
            #expect(plan.written.count <= 2 && storage.written <= 2 * PartPlanner.targetBytes, "\(at): \(plan.written.count) parts")
            #expect(plan.removed.count <= 2 && !plan.whole)
            #expect(storage.joined == SessionCodec.encode(next))
            current = next
        }
        // Appends add to the last part, and start new ones as it fills: five of an eighth of a
        // part each start one new part at most.
        let appended = max(1, PartPlanner.targetBytes / (8 * size))
        for step in 0..<5 {
            let fresh = try Self.items(30_000 + step * appended..<30_000 + (step + 1) * appended, size: size)
            let next = JSONCollection.flat(Self.flat(current) + Self.flat(fresh), owners: current.owners.merging(fresh.owners))
            storage.commit(PartPlanner.change(from: current, stored: storage.manifest, to: next, naming: "a\(step)."))
            #expect(storage.written <= appended * size + 2 * PartPlanner.targetBytes)
            #expect(storage.joined == SessionCodec.encode(next))
            current = next
        }
        #expect(storage.manifest.count <= parts + 1)
    }

    /// The id hashes kept beside each part are of the ids' values, alike in every process and
    /// for every spelling of one id (the process-keyed `identityHash` is neither), and the
    /// plan keeps each written part's, unit by unit.
    @Test func partsCarryTheirUnitsStableIDHashes() throws {
        let spelled = try CollectionDocument.read(
            ByteBuffer(Array(#"[{"id":"a"},{"id":"\u0061"},{"id":1},{"id":1.0},{"id":10e-1},{"id":"1"},{"id":2.5},{"id":25e-1},{"id":-3}]"#.utf8)))
        let items = Self.flat(spelled)
        for (one, other) in [(0, 1), (2, 3), (3, 4), (6, 7)] {
            #expect(items[one].hasSameID(as: items[other]) && items[one].stableIDHash == items[other].stableIDHash, "\(one) and \(other)")
        }
        #expect(Set([0, 2, 5, 6, 8].map { items[$0].stableIDHash }).count == 5)
        // FNV-1a over a tag (a string) and the value's bytes (a): fixed, whatever the process.
        #expect(items[0].stableIDHash == 0x586C_7A36)
        let collection = try Self.items(0..<3_000, size: 100)
        let plan = PartPlanner.whole(collection)
        #expect(plan.writtenIDs.count == plan.written.count)
        var offset = 0
        for (part, ids) in zip(plan.manifest, plan.writtenIDs) {
            let hashes = stride(from: 0, to: ids.count, by: 4).map {
                UInt32(ids[$0]) | UInt32(ids[$0 + 1]) << 8 | UInt32(ids[$0 + 2]) << 16 | UInt32(ids[$0 + 3]) << 24
            }
            #expect(hashes == Self.flat(collection)[offset..<offset + part.count].map(\.stableIDHash))
            offset += part.count
        }
    }
}
