import ByteJSON

extension PatchEdit {
    /// The sections of a result: an element that is still the very text of a held section is
    /// that section, kept as it was; the others are written (see `EditFinish.sections`).
    func sections(_ elements: [LazyJSON], held: [JSONSection], owners: DocumentOwners) throws(APIError) -> EditOutcome {
        var heldAt: [UnsafePointer<UInt8>: Int] = [:]
        for (index, section) in held.enumerated() {
            if let start = section.text.baseAddress { heldAt[start] = index }
        }
        let result = elements.map { element -> EditFinish.Section in
            guard case .text(let text) = element, let start = text.baseAddress, let index = heldAt[start], held[index].text.count == text.count
            else { return .written(element) }
            return .held(index)
        }
        // A patch may copy a held section's items into another: nothing checked their ids.
        return try finish(sectioned: true, heldCount: held.count).sections(held: held, result: result, owners: owners, checked: false, place: { $0 })
    }
}
