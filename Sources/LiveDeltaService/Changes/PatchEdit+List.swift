import LiveCollections

extension PatchEdit {
    /// The items of a flat result: the held items the patch did not reach, runs copied whole; an
    /// element that is still the very text of a held item, that item (its id and hashes as they
    /// were); the others read, together, as a body's items would be.
    func flatItems(_ patched: ListOverlay<LazyJSON>, held: [JSONItem], owners: DocumentOwners) throws(APIError) -> EditOutcome {
        let heldIndex = Self.heldIndex(madeNodes: patched.madeNodes, held: held)
        var written: [UInt8] = []
        var writtenAt: [(position: Int, range: Range<Int>)] = []
        /// Held items that are elements now: where they were, and where they are.
        var heldElements: [(old: Int, new: Int)] = []
        /// Held items outside every run (each one an operation reached): the gaps between runs.
        var reached: [Int] = []
        var afterRuns = 0
        var position = 0
        /// Held items placed so far as elements: one placed again (a copy) is written out, so
        /// that it takes the memory it is counted for.
        var placed = Set<Int>()
        for piece in patched.pieces {
            switch piece {
            case .held(let run):
                guard !run.isEmpty else { continue }
                reached += afterRuns..<run.lowerBound
                afterRuns = run.upperBound
                position += run.count
            case .node(let node):
                let element = patched[node]
                if case .text(let text) = element, let index = heldIndex(text), placed.insert(index).inserted {
                    heldElements.append((index, position))
                } else {
                    let start = written.count
                    switch element {
                    case .text(let text): written.append(contentsOf: text)
                    case .owned(let text): written.append(contentsOf: text)
                    case .array, .object: written.append(contentsOf: element.bytes)
                    }
                    writtenAt.append((position, start..<written.count))
                }
                position += 1
            }
        }
        reached += afterRuns..<held.count
        let (read, readOwners) = try written.withUnsafeBufferPointer { text throws(APIError) in
            try reading.items(
                writtenAt.map { UnsafeBufferPointer(rebasing: text[$0.range]) },
                origin: { index in culprit(forItemAt: writtenAt[index].position, sectioned: false, heldCount: held.count) },
                place: { writtenAt[$0].position })
        }
        var list: [JSONItem] = []
        list.reserveCapacity(patched.count)
        var (nextHeld, nextRead) = (0, 0)
        for piece in patched.pieces {
            if case .held(let run) = piece {
                list.append(contentsOf: held[run])
            } else if nextHeld < heldElements.count, heldElements[nextHeld].new == list.count {
                list.append(held[heldElements[nextHeld].old])
                nextHeld += 1
            } else {
                list.append(read[nextRead])
                nextRead += 1
            }
        }
        let documents = owners.merging(readOwners)
        let finish = finish(sectioned: false, heldCount: held.count)
        guard reading.options.unique else {
            // Occurrences follow the order the patch left: the items with the id of one the patch
            // reached or wrote are numbered again, and paired with the held ones by occurrence.
            let renumbering = read + reached.map { held[$0] }
            return try finish.flat(held: held, list: list, documents: documents, change: .repeated(renumbering: renumbering, updated: []))
        }
        let touched = Self.touched(
            held: held, read: read, writtenAt: writtenAt.map(\.position), heldElements: heldElements,
            unplaced: reached.filter { !placed.contains($0) })
        return try finish.flat(held: held, list: list, documents: documents, change: .unique(touched: touched, unchecked: read))
    }

    /// Which held item a text is, if it is the very text of one the patch made a node (found
    /// by where the text starts): such a node is that held item, wherever the patch put it.
    private static func heldIndex(madeNodes: [Int], held: [JSONItem]) -> (UnsafeBufferPointer<UInt8>) -> Int? {
        var heldAt: [UnsafePointer<UInt8>: Int] = [:]
        for row in madeNodes { if let start = held[row].text.baseAddress { heldAt[start] = row } }
        return { text in
            guard let start = text.baseAddress, let row = heldAt[start], held[row].text.count == text.count else { return nil }
            return row
        }
    }

    /// What a patch of a list with unique ids touched: the items it wrote (each the same item as
    /// a held one it took out, where their ids match: no other held item can hold that id now),
    /// the held items it reached and left somewhere, and those it left out (`unplaced`).
    private static func touched(
        held: [JSONItem], read: [JSONItem], writtenAt: [Int], heldElements: [(old: Int, new: Int)], unplaced: [Int]
    ) -> [TouchedItem] {
        var rewritten = [Int?](repeating: nil, count: read.count)
        if !read.isEmpty {
            let finder = HashFinder(read)
            for index in unplaced { if let found = finder.find(held[index]) { rewritten[found] = index } }
        }
        var touched: [TouchedItem] = []
        for (index, position) in writtenAt.enumerated() {
            let old = rewritten[index]
            touched.append(TouchedItem(old: old, new: position, changed: old.map { held[$0] != read[index] } ?? false))
        }
        for element in heldElements { touched.append(TouchedItem(old: element.old, new: element.new, changed: false)) }
        let matched = Set(rewritten.compactMap { $0 })
        for index in unplaced where !matched.contains(index) { touched.append(TouchedItem(old: index, new: nil, changed: false)) }
        return touched
    }
}
