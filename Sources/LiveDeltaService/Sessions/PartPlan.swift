/// What a commit stores of a collection, as `PartPlanner` plans it: every part it is made of
/// after the commit, in order, the text of those it writes, and the names of the stored ones it
/// drops.
package struct PartPlan {
    package var shape: StoredShape
    /// Every part, in order.
    package var manifest: [StoredPart]
    /// The parts this commit writes: each name with its text, in pieces that stay valid for the
    /// call the parts are given to.
    package var written: [(name: String, text: [UnsafeRawBufferPointer])]
    /// For each part written (in `written`'s order), its units' id hashes
    /// (`StoredUnit.stableIDHash`, 32 bits little-endian each, in order): where storage keeps
    /// them beside the part, a window anchored by id finds its part without reading the others.
    package var writtenIDs: [[UInt8]] = []
    /// The stored parts this commit drops.
    package var removed: [String]
    /// The items the collection holds: a sectioned one's parts count sections, and a window
    /// read from some of them still says how many items the session has.
    package var items = 0

    /// Every part is written: nothing stored is kept.
    package var whole: Bool { written.count == manifest.count }

    /// The bytes of text written.
    package var writtenBytes: Int {
        written.reduce(0) { total, part in part.text.reduce(total) { $0 + $1.count } }
    }
}
