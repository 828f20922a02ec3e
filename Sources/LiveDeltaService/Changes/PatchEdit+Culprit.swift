/// Which operation a refusal about the patch's result is put on.
extension PatchEdit {
    /// Where a path (or `from`) goes in the list of places (items of a flat document, sections
    /// of a sectioned one).
    private enum Reach {
        /// The list itself, or the document: every place.
        case list
        /// A place, taken, given or replaced whole.
        case at(Int)
        /// Something inside a place.
        case within(Int)
        /// Elsewhere in the document.
        case elsewhere
    }

    /// `tokens` as a reach into the list, whose length is `length` (nil where not known).
    private func reach(_ tokens: [[UInt8]]?, sectioned: Bool, length: Int?) -> Reach {
        guard let tokens else { return .elsewhere }
        let depth = sectioned ? 1 : 0
        if sectioned, let first = tokens.first, first != Array("sections".utf8) { return .elsewhere }
        guard tokens.count > depth else { return .list }
        let token = tokens[depth]
        let place: Int
        if token == [UInt8(ascii: "-")] {
            place = length ?? .max
        } else if let number = Int(String(decoding: token, as: UTF8.self)) {
            place = number
        } else {
            return .elsewhere
        }
        return tokens.count == depth + 1 ? .at(place) : .within(place)
    }

    /// The list's length before each operation, as far as it can be told (nil after an
    /// operation that took or gave the whole list).
    private func lengths(sectioned: Bool, heldCount: Int) -> [Int?] {
        var lengths: [Int?] = []
        lengths.reserveCapacity(operations.count)
        var length: Int? = heldCount
        for operation in operations {
            lengths.append(length)
            guard let known = length, operation.kind != .test else { continue }
            let to = reach(operation.path, sectioned: sectioned, length: known)
            let from = reach(operation.from, sectioned: sectioned, length: known)
            if case .list = to {
                length = nil
                continue
            }
            var change = 0
            if case .at = to {
                switch operation.kind {
                case .add, .copy, .move: change += 1
                case .remove: change -= 1
                case .replace, .test: break
                }
            }
            if operation.kind == .move, case .at = from { change -= 1 }
            length = known + change
        }
        return lengths
    }

    /// The operation a refusal about the result's item (or section) `index` is put on: the last
    /// that wrote into what ends at that place, traced back through the places earlier
    /// operations added, removed and moved; else the last that wrote anything. A move carries
    /// an item without writing it, so the trace follows it to where it came from.
    func culprit(forItemAt index: Int, sectioned: Bool, heldCount: Int) -> JSONPointer {
        let lengths = lengths(sectioned: sectioned, heldCount: heldCount)
        var place = index
        for (operation, length) in zip(operations, lengths).reversed() where operation.kind != .test {
            let to = reach(operation.path, sectioned: sectioned, length: length)
            let from = reach(operation.from, sectioned: sectioned, length: length)
            switch (operation.kind, to) {
            case (_, .list): return operation.pointer
            case (_, .within(let target)) where target == place: return operation.pointer
            case (.replace, .at(let target)) where target == place: return operation.pointer
            case (.add, .at(let target)), (.copy, .at(let target)):
                if target == place { return operation.pointer }
                if target < place { place -= 1 }
            case (.remove, .at(let target)):
                if target <= place { place += 1 }
            case (.move, .at(let target)):
                if target == place {
                    // The item moved here: written by whatever wrote it where it was.
                    guard case .at(let source) = from else { return operation.pointer }
                    place = source
                    continue
                }
                if target < place { place -= 1 }
            default: break
            }
            // A move's removal, undone after its addition.
            guard operation.kind == .move else { continue }
            switch from {
            case .at(let source) where source <= place: place += 1
            case .within(let source) where source == place: return operation.pointer
            case .list: return operation.pointer
            default: break
            }
        }
        let writes = operations.filter { $0.kind != .test && $0.kind != .remove }
        return (writes.last ?? operations.last)?.pointer ?? JSONPointer()
    }
}
