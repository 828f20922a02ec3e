/// An element of an array read by `JSONScanner.scanElements`.
public struct ScannedElement: Sendable, Equatable {
    /// The element itself: kind, hash and range (for a string, whether it holds escapes).
    public var value: ScannedValue
    /// Where the element is an object: the value of the member looked for (the first, where
    /// its name repeats).
    public var member: ScannedValue?
    /// Whether that member's name came more than once.
    public var repeated: Bool

    public init(value: ScannedValue, member: ScannedValue?, repeated: Bool) {
        self.value = value
        self.member = member
        self.repeated = repeated
    }
}

extension JSONScanner {
    /// At an array: reads it whole in one walk, as `scanValue()` would, and hands its elements
    /// to `take` in order, a batch at a time, picking out the member called `name` of each
    /// element that is an object.
    ///
    /// `take` is called when `batch` elements have been read, after the last, and before an
    /// error in the text is thrown, with the elements read since its last call; `unfinished`
    /// is then where the element being read when the error came starts (nil where the error
    /// lies between elements). Where `take` returns false, the walk stops, nothing is thrown,
    /// `scanElements` returns false and the scanner's position is wherever the walk stopped.
    /// So a caller that checks each element in `take`, and the unfinished one before an error,
    /// meets its own refusals and the text's errors in the order they stand in the text.
    ///
    /// One walk, with no calls between elements: for an array of small objects, cheaper than
    /// `beginArray`, `scanValue(findingMember:)` and `nextElement` for each element.
    public mutating func scanElements(
        findingMember name: JSONName,
        batch: Int = 256,
        take: (_ elements: [ScannedElement], _ unfinished: Int?) -> Bool
    ) throws(JSONError) -> Bool {
        skipWhitespace()
        guard position < count, base[position] == 0x5B else {
            // Not an array: `beginArray` says what is wrong.
            _ = try beginArray()
            return take([], nil)
        }
        // The closure lives only as long as this call: the walk keeps it in its observer.
        return try withoutActuallyEscaping(take) { (take) throws(JSONError) -> Bool in
            if let short = name.short {
                var walk = ElementWalk(finder: MemberFinder(name: short), batch: batch, take: take)
                return try walk.run(&self)
            }
            var walk = ElementWalk(finder: MemberFinder(name: name), batch: batch, take: take)
            return try walk.run(&self)
        }
    }
}

/// The observer behind `scanElements`: a `MemberFinder` over each element's members (depth 2),
/// started afresh for every element, and the batch of elements read.
struct ElementWalk<Name: MemberName>: TopMembers {
    static var listens: Bool { true }
    static var memberDepth: Int { 2 }
    static var watchesElements: Bool { true }
    private var finder: MemberFinder<Name>
    private let batch: Int
    private let take: ([ScannedElement], Int?) -> Bool
    private var elements: [ScannedElement] = []
    /// Where the element being read starts, or whitespace before it; nil between elements.
    private var unfinished: Int?
    private var stopped = false

    init(finder: MemberFinder<Name>, batch: Int, take: @escaping ([ScannedElement], Int?) -> Bool) {
        self.finder = finder
        self.batch = max(1, batch)
        self.take = take
        // Small arrays (most requests) take no more than they need.
        elements.reserveCapacity(min(self.batch, 16))
    }

    /// Walks the array at the scanner's cursor; false where `take` stopped it.
    mutating func run(_ scanner: inout JSONScanner) throws(JSONError) -> Bool {
        do {
            _ = try scanner.scanContainer(observing: &self)
        } catch {
            if !stopped && !take(elements, unfinished.map { scanner.skippingWhitespace(from: $0) }) { return false }
            throw error
        }
        return !stopped && take(elements, nil)
    }

    var keyHash: UInt64 { finder.keyHash }
    var wantsValue: Bool { finder.wantsValue }

    @inline(__always)
    mutating func key(_ key: ScannedString, in scanner: JSONScanner) { finder.key(key, in: scanner) }

    @inline(__always)
    mutating func value(hash: UInt64, in scanner: JSONScanner) { finder.value(hash: hash, in: scanner) }

    @inline(__always)
    mutating func elementStarts(after position: Int) { unfinished = position }

    mutating func elementEnds(hash: UInt64, before position: Int, in scanner: JSONScanner) -> Bool {
        // The element's own bytes, without the whitespace around them.
        let start = scanner.skippingWhitespace(from: unfinished ?? position)
        var end = position
        while end > start && JSONScanner.isWhitespace(scanner.base[end - 1]) { end -= 1 }
        unfinished = nil
        let kind = JSONScanner.kind(ofFirstByte: scanner.base[start])
        let escapes = kind == .string && scanner.holdsBackslash(start..<end)
        let value = ScannedValue(kind: kind, hash: hash, start: start, end: end, hasEscapes: escapes)
        elements.append(ScannedElement(value: value, member: finder.found, repeated: finder.repeated))
        finder.reset()
        guard elements.count == batch else { return true }
        stopped = !take(elements, nil)
        elements.removeAll(keepingCapacity: true)
        return !stopped
    }
}

extension JSONScanner {
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    /// The first offset from `offset` on that is not whitespace (or the end of the text).
    @inline(__always)
    func skippingWhitespace(from offset: Int) -> Int {
        var offset = offset
        while offset < count && Self.isWhitespace(base[offset]) { offset += 1 }
        return offset
    }
}
