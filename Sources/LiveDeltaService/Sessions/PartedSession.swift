/// A session as shared storage keeps it in parts: each part's text by name, in the manifest's
/// order. The shared store's listener holds one for each followed session that other
/// replicas change, so that a logged step (the parts its commit wrote, and those it dropped)
/// brings it to the next version without reading the session: a commit to a session of a
/// million items then logs tens of kilobytes, not the session.
package struct PartedSession: Sendable {
    package var version: UInt64
    package var incarnation: String
    package var options: [UInt8]
    package var shape: StoredShape
    package var manifest: [StoredPart]
    package var texts: [String: [UInt8]]

    package init(
        version: UInt64, incarnation: String, options: [UInt8], shape: StoredShape, manifest: [StoredPart], texts: [String: [UInt8]]
    ) {
        self.version = version
        self.incarnation = incarnation
        self.options = options
        self.shape = shape
        self.manifest = manifest
        self.texts = texts
    }

    /// The session as a read of it is: its parts joined into one collection's text. Nil where a
    /// part of the manifest has no text (the copy is not whole).
    package var stored: StoredSession? {
        let (opening, closing) = (shape.opening, shape.closing)
        var data: [UInt8] = []
        var capacity = opening.utf8CodeUnitCount + closing.utf8CodeUnitCount
        for part in manifest {
            guard let text = texts[part.name] else { return nil }
            capacity += text.count + 1
        }
        data.reserveCapacity(capacity)
        data.append(contentsOf: UnsafeBufferPointer(start: opening.utf8Start, count: opening.utf8CodeUnitCount))
        for (index, part) in manifest.enumerated() {
            if index > 0 { data.append(UInt8(ascii: ",")) }
            data.append(contentsOf: texts[part.name]!)
        }
        data.append(contentsOf: UnsafeBufferPointer(start: closing.utf8Start, count: closing.utf8CodeUnitCount))
        return StoredSession(version: version, incarnation: incarnation, options: options, data: data, parts: manifest)
    }

    /// Takes a logged step forward from this copy, where it follows it (the same life, from this
    /// version, these parts); false, unchanged, where it does not.
    package mutating func apply(_ step: LoggedStep, _ parts: LoggedParts) -> Bool {
        guard step.incarnation == incarnation, step.baseVersion == version, Self.same(parts.previousManifest, manifest) else { return false }
        var texts = self.texts
        for name in parts.dropped.keys { texts[name] = nil }
        texts.merge(parts.written) { _, new in new }
        guard parts.manifest.allSatisfy({ texts[$0.name] != nil }), texts.count == parts.manifest.count else { return false }
        (self.texts, manifest, version, options) = (texts, parts.manifest, step.version, step.options)
        return true
    }

    /// Takes this copy back over the logged step that made it, to the version before; false,
    /// unchanged, where the step did not make it. The options are left as they are: the step
    /// before says what they were.
    package mutating func undo(_ step: LoggedStep, _ parts: LoggedParts) -> Bool {
        guard step.incarnation == incarnation, step.version == version, let base = step.baseVersion, Self.same(parts.manifest, manifest)
        else { return false }
        var texts = self.texts
        for name in parts.written.keys { texts[name] = nil }
        texts.merge(parts.dropped) { _, old in old }
        guard parts.previousManifest.allSatisfy({ texts[$0.name] != nil }), texts.count == parts.previousManifest.count else { return false }
        (self.texts, manifest, version) = (texts, parts.previousManifest, base)
        return true
    }

    private static func same(_ one: [StoredPart], _ other: [StoredPart]) -> Bool {
        one.count == other.count && zip(one, other).allSatisfy { $0.name == $1.name && $0.count == $1.count }
    }
}

/// What a logged step holds of the session after it.
package enum LoggedContent: Sendable {
    /// Nothing (a deletion).
    case none
    /// Nothing: the session is to be read (a collection written whole, or a change to too many
    /// parts to log).
    case read
    /// The session whole, as an earlier version logged every step.
    case whole([UInt8])
    /// The parts the step's commit wrote and dropped.
    case parts(LoggedParts)
}

/// The parts a commit changed, as its logged step holds them: enough to take a copy of the
/// session forward from the version before (`PartedSession.apply`) and back (`undo`).
package struct LoggedParts: Sendable {
    /// Every part after the step, in order (their `bytes` uncounted: 0).
    package var manifest: [StoredPart]
    /// Every part before it.
    package var previousManifest: [StoredPart]
    /// The parts it wrote: name and text.
    package var written: [String: [UInt8]]
    /// The parts it dropped: name and the text they had.
    package var dropped: [String: [UInt8]]

    package init(manifest: [StoredPart], previousManifest: [StoredPart], written: [String: [UInt8]], dropped: [String: [UInt8]]) {
        self.manifest = manifest
        self.previousManifest = previousManifest
        self.written = written
        self.dropped = dropped
    }
}
