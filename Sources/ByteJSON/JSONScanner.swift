/// What kind of JSON value was read.
package enum JSONKind: UInt8, Sendable {
    case null, bool, number, string, array, object
}

/// A value read by `JSONScanner.scanValue()`: its kind, meaning hash and byte range.
package struct ScannedValue: Sendable, Equatable {
    package var kind: JSONKind
    package var hash: UInt64
    package var start: Int
    package var end: Int
    /// For a string: whether it holds escapes (when not, its text is its value).
    package var hasEscapes = false
}

/// A string read by the scanner: the bytes between its quotes, and whether they hold escapes.
package struct ScannedString: Sendable, Equatable {
    package var hash: UInt64
    /// First byte after the opening quote.
    package var start: Int
    /// The closing quote.
    package var end: Int
    package var hasEscapes: Bool

    package init(hash: UInt64, start: Int, end: Int, hasEscapes: Bool) {
        self.hash = hash
        self.start = start
        self.end = end
        self.hasEscapes = hasEscapes
    }
}

/// A validating, hashing reader over UTF-8 bytes that accepts exactly RFC 8259 JSON.
///
/// It builds no tree: `scanValue()` checks a whole value (any depth up to `maxDepth`, without
/// recursion) and returns its meaning hash and range; the member and element helpers walk one
/// level so that callers can pick out what they need.
package struct JSONScanner {
    package let base: UnsafePointer<UInt8>
    package let count: Int
    package let maxDepth: Int
    /// Containers entered with `beginObject`/`beginArray` and not yet left: the depth at the
    /// cursor, so that `maxDepth` bounds the whole text however it is walked. A reader that
    /// starts inside a text sets it to the depth it starts at.
    package var openDepth = 0
    /// False: check only, and report every hash as 0 (faster: no hashing).
    package var hashing = true
    /// The process's hash key, read once here rather than on every string.
    let key = ValueHash.processKey
    /// The cursor. It is stored last, alone in its word, on purpose: where a scanner is copied
    /// (passed to a method that is not inlined), the copy loads the fields before it two at a
    /// time and the cursor by itself, and so takes the cursor straight from the store that
    /// just wrote it. From a 16-byte load straddling it, the processor could not, and waited
    /// for the store to reach the cache.
    package var position: Int

    /// `bytes` must stay valid while the scanner is used.
    package init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) {
        // An empty buffer may have no address; any readable address of zero length will do.
        base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
        count = bytes.count
        position = 0
        self.maxDepth = maxDepth
    }

    /// Checks that `bytes` hold exactly one JSON value, with only whitespace around it.
    package static func validate(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) throws(JSONError) {
        if JSONValidator.accepts(bytes, maxDepth: maxDepth) { return }
        // Not valid: the scanner finds what is wrong and where.
        var scanner = JSONScanner(bytes, maxDepth: maxDepth)
        scanner.hashing = false
        _ = try scanner.scanDocument()
    }

    /// Reads the one value the text holds, and checks nothing but whitespace follows it.
    package mutating func scanDocument() throws(JSONError) -> ScannedValue {
        let value = try scanValue()
        skipWhitespace()
        if position < count { throw JSONError(.trailingContent, at: position) }
        return value
    }

    @inline(__always)
    package mutating func skipWhitespace() {
        while position < count {
            let byte = base[position]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            position += 1
        }
    }

    /// The next byte after whitespace, without consuming it; nil at the end.
    package mutating func peek() -> UInt8? {
        skipWhitespace()
        return position < count ? base[position] : nil
    }

    // MARK: - Whole values

    /// Reads one complete value after optional whitespace.
    package mutating func scanValue() throws(JSONError) -> ScannedValue {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        let start = position
        // Scalars need no frames. The same dispatch stands again in the value loop: one shared
        // helper there measured slower on the 100,000-movie reader (`make bench-service`).
        switch base[position] {
        case 0x7B, 0x5B: break
        case 0x22:
            let string = try scanString()
            return ScannedValue(kind: .string, hash: string.hash, start: start, end: position, hasEscapes: string.hasEscapes)
        case 0x2D, 0x30...0x39: return ScannedValue(kind: .number, hash: try scanAnyNumber(), start: start, end: position)
        case 0x74: return try literal(.bool, "true", ValueHash.true)
        case 0x66: return try literal(.bool, "false", ValueHash.false)
        case 0x6E: return try literal(.null, "null", ValueHash.null)
        case let byte: throw JSONError(.unexpectedByte(byte, expected: "a value"), at: position)
        }
        var nobody = NoObserver()
        return try scanContainer(observing: &nobody)
    }

    /// Reads one complete value, and picks out the member called `name` where it is an object:
    /// that member's value (the first, where the name repeats), and whether the name repeats.
    /// One pass, as fast as `scanValue()`.
    package mutating func scanValue(findingMember name: JSONName) throws(JSONError) -> (value: ScannedValue, member: ScannedValue?, repeated: Bool) {
        try scanValue(findingMember: name, shapes: nil)
    }

    /// `scanValue(findingMember:)` for one of many objects that likely spell the same keys in
    /// the same order (the items of an array): `keyShapes`, kept by the caller from one object
    /// to the next, lets a key spelled as before skip its hashing.
    package mutating func scanValue(findingMember name: JSONName, keyShapes: inout KeyShapes) throws(JSONError) -> (
        value: ScannedValue, member: ScannedValue?, repeated: Bool
    ) {
        try withUnsafeMutablePointer(to: &keyShapes) { (shapes) throws(JSONError) in try scanValue(findingMember: name, shapes: shapes) }
    }

    @inline(__always)
    private mutating func scanValue(findingMember name: JSONName, shapes: UnsafeMutablePointer<KeyShapes>?) throws(JSONError) -> (
        value: ScannedValue, member: ScannedValue?, repeated: Bool
    ) {
        skipWhitespace()
        // A short name is plain data: the finder then holds no reference, which would cost a
        // retain and a release per item.
        if let short = name.short {
            var finder = MemberFinder(name: short)
            let value = try scanContainer(observing: &finder, shapes: shapes)
            return (value, finder.found, finder.repeated)
        }
        var finder = MemberFinder(name: name)
        let value = try scanContainer(observing: &finder, shapes: shapes)
        return (value, finder.found, finder.repeated)
    }

    /// Inlined, with the walk's hash coming back in registers, so that no `ScannedValue` is
    /// stored field by field and loaded back whole on its way out (see `position`).
    @inline(__always)
    private mutating func scanContainer<Observer: TopMembers>(observing observer: inout Observer, shapes: UnsafeMutablePointer<KeyShapes>? = nil)
        throws(JSONError) -> ScannedValue
    {
        // The open containers live on the stack while they fit there (32 levels); deeper
        // texts move them to the heap. No reference means nothing to retain per call.
        let start = position
        let (hash, hasEscapes) = try withUnsafeTemporaryAllocation(of: Frame.self, capacity: 32) { (inline) throws(JSONError) -> (UInt64, Bool) in
            var frames = FrameStack(inline)
            defer { frames.release() }
            return try scanValue(frames: &frames, observer: &observer, shapes: shapes)
        }
        return ScannedValue(kind: Self.kind(ofFirstByte: base[start]), hash: hash, start: start, end: position, hasEscapes: hasEscapes)
    }

    /// The whole value at the cursor, without recursion: containers are frames on a stack.
    /// `observer` hears of the outermost object's keys and values (depth 1).
    /// `shapes`, where given, remembers the keys of objects one level in.
    /// Returns the value's hash and, for a string, whether it holds escapes; the value ends at
    /// the cursor.
    private mutating func scanValue<Observer: TopMembers>(
        frames: inout FrameStack, observer: inout Observer, shapes: UnsafeMutablePointer<KeyShapes>?
    ) throws(JSONError) -> (hash: UInt64, hasEscapes: Bool) {
        var depth = 0
        // The innermost open container is kept here, where its sum and count can stay in
        // registers rather than go through memory from one member to the next (a cost `perf`
        // showed in the item reader); `frames` holds the ones around it (depth - 1 of them).
        var top = Frame(isObject: false, accumulator: 0, count: 0, keyHash: 0)
        value: while true {
            skipWhitespace()
            guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
            var hash: UInt64
            switch base[position] {
            case 0x7B:  // {
                if openDepth + depth >= maxDepth { throw JSONError(.tooDeep(limit: maxDepth), at: position) }
                position += 1
                skipWhitespace()
                if position < count && base[position] == 0x7D {
                    position += 1
                    hash = ValueHash.object(memberSum: 0, count: 0)
                } else {
                    let key = depth == 0 ? try scanKeyAndColon(place: 0, shapes: shapes) : try scanKeyAndColon()
                    Self.open(Frame(isObject: true, accumulator: 0, count: 0, keyHash: key.hash), replacing: &top, in: &frames, depth: &depth)
                    if Observer.listens && depth == 1 && (!hashing || key.hash == observer.keyHash || observer.keyHash == 0) {
                        observer.key(key, in: &self)
                    }
                    continue value
                }
            case 0x5B:  // [
                if openDepth + depth >= maxDepth { throw JSONError(.tooDeep(limit: maxDepth), at: position) }
                position += 1
                skipWhitespace()
                if position < count && base[position] == 0x5D {
                    position += 1
                    hash = ValueHash.mix(ValueHash.arrayTag, 0)
                } else {
                    Self.open(
                        Frame(isObject: false, accumulator: ValueHash.arrayTag, count: 0, keyHash: 0), replacing: &top, in: &frames, depth: &depth)
                    continue value
                }
            case 0x22:
                let string = try scanString()
                if depth == 0 { return (string.hash, string.hasEscapes) }
                hash = string.hash
            case 0x2D, 0x30...0x39: hash = try scanAnyNumber()
            case 0x74: hash = try scanLiteral("true", ValueHash.true)
            case 0x66: hash = try scanLiteral("false", ValueHash.false)
            case 0x6E: hash = try scanLiteral("null", ValueHash.null)
            case let byte: throw JSONError(.unexpectedByte(byte, expected: "a value"), at: position)
            }
            // Hand the finished value to its container, closing containers that end here.
            while depth > 0 {
                if Observer.listens && depth == 1 && observer.wantsValue { observer.value(hash: hash, in: &self) }
                // Sums and counts feed only the hash: a plain check writes nothing to the frame.
                if hashing {
                    top.accumulator =
                        top.isObject
                        ? top.accumulator &+ ValueHash.member(key: top.keyHash, value: hash)
                        : ValueHash.mix(top.accumulator, hash)
                    top.count += 1
                }
                skipWhitespace()
                guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
                let byte = base[position]
                let isObject = top.isObject
                if byte == 0x2C {  // ,
                    position += 1
                    if isObject {
                        let key = depth == 1 ? try scanKeyAndColon(place: top.count, shapes: shapes) : try scanKeyAndColon()
                        top.keyHash = key.hash
                        if Observer.listens && depth == 1 && (!hashing || key.hash == observer.keyHash || observer.keyHash == 0) {
                            observer.key(key, in: &self)
                        }
                    }
                    continue value
                }
                guard byte == (isObject ? 0x7D : 0x5D) else {
                    throw JSONError(.unexpectedByte(byte, expected: isObject ? "',' or '}'" : "',' or ']'"), at: position)
                }
                position += 1
                hash =
                    isObject
                    ? ValueHash.object(memberSum: top.accumulator, count: top.count)
                    : ValueHash.mix(top.accumulator, UInt64(top.count))
                depth -= 1
                if depth > 0 { top = frames.base[depth - 1] }
            }
            return (hashing ? hash : 0, false)
        }
    }

    /// Makes `frame` the innermost open container, the one it replaces going onto `frames`.
    @inline(__always)
    private static func open(_ frame: Frame, replacing top: inout Frame, in frames: inout FrameStack, depth: inout Int) {
        if depth > 0 {
            var outer = depth - 1
            frames.push(top, at: &outer)
        }
        top = frame
        depth += 1
    }

    /// `scanKeyAndColon` for the key at `place` in an object one level in: compared first with
    /// the key read at that place last time.
    @inline(__always)
    private mutating func scanKeyAndColon(place: Int, shapes: UnsafeMutablePointer<KeyShapes>?) throws(JSONError) -> ScannedString {
        guard let shapes, hashing, place < KeyShapes.places else { return try scanKeyAndColon() }
        skipWhitespace()
        if position + 17 <= count && base[position] == 0x22, let key = shapes.pointee.match(place, at: position + 1, in: base) {
            position = key.end + 2
            return key
        }
        let key = try scanKeyAndColon()
        shapes.pointee.remember(place, key, colon: position - 1, in: base, count: count)
        return key
    }

    @inline(__always)
    private mutating func scanKeyAndColon() throws(JSONError) -> ScannedString {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        guard base[position] == 0x22 else {
            throw JSONError(.unexpectedByte(base[position], expected: "a string key"), at: position)
        }
        let key = try scanString()
        skipWhitespace()
        guard position < count, base[position] == 0x3A else {
            if position >= count { throw JSONError(.unexpectedEnd, at: position) }
            throw JSONError(.unexpectedByte(base[position], expected: "':'"), at: position)
        }
        position += 1
        return key
    }

    private mutating func literal(_ kind: JSONKind, _ word: StaticString, _ hash: UInt64) throws(JSONError) -> ScannedValue {
        let start = position
        let hash = try scanLiteral(word, hash)
        return ScannedValue(kind: kind, hash: hashing ? hash : 0, start: start, end: position)
    }

    private mutating func scanLiteral(_ word: StaticString, _ hash: UInt64) throws(JSONError) -> UInt64 {
        let length = word.utf8CodeUnitCount
        for k in 0..<length {
            guard position + k < count else { throw JSONError(.unexpectedEnd, at: position + k) }
            let byte = base[position + k]
            guard byte == word.utf8Start[k] else {
                throw JSONError(.unexpectedByte(byte, expected: "'\(word)'"), at: position + k)
            }
        }
        position += length
        return hash
    }

    @inline(__always)
    static func kind(ofFirstByte byte: UInt8) -> JSONKind {
        switch byte {
        case 0x7B: .object
        case 0x5B: .array
        case 0x22: .string
        case 0x74, 0x66: .bool
        case 0x6E: .null
        default: .number
        }
    }

    // MARK: - One level at a time

    /// Consumes `byte` after optional whitespace.
    package mutating func expect(_ byte: UInt8, _ description: String) throws(JSONError) {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        guard base[position] == byte else {
            throw JSONError(.unexpectedByte(base[position], expected: description), at: position)
        }
        position += 1
    }

    /// At an object: enters it and returns its first key (nil for `{}`).
    package mutating func beginObject() throws(JSONError) -> ScannedString? {
        try enter(0x7B, "'{'")
        skipWhitespace()
        if position < count && base[position] == 0x7D {
            position += 1
            return nil
        }
        openDepth += 1
        return try scanKeyAndColon()
    }

    /// Consumes an opening bracket, unless it would pass `maxDepth`.
    private mutating func enter(_ byte: UInt8, _ description: String) throws(JSONError) {
        skipWhitespace()
        if openDepth >= maxDepth && position < count && base[position] == byte {
            throw JSONError(.tooDeep(limit: maxDepth), at: position)
        }
        try expect(byte, description)
    }

    /// After a member's value: the next key, or nil where the object ends.
    package mutating func nextKey() throws(JSONError) -> ScannedString? {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        switch base[position] {
        case 0x2C:
            position += 1
            return try scanKeyAndColon()
        case 0x7D:
            position += 1
            openDepth -= 1
            return nil
        case let byte: throw JSONError(.unexpectedByte(byte, expected: "',' or '}'"), at: position)
        }
    }

    /// At an array: enters it and says whether an element follows (false for `[]`).
    package mutating func beginArray() throws(JSONError) -> Bool {
        try enter(0x5B, "'['")
        skipWhitespace()
        if position < count && base[position] == 0x5D {
            position += 1
            return false
        }
        openDepth += 1
        return true
    }

    /// After an element: whether another follows (false where the array ends).
    package mutating func nextElement() throws(JSONError) -> Bool {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        switch base[position] {
        case 0x2C:
            position += 1
            return true
        case 0x5D:
            position += 1
            openDepth -= 1
            return false
        case let byte: throw JSONError(.unexpectedByte(byte, expected: "',' or ']'"), at: position)
        }
    }
}

/// What `scanValue` tells about the members of the outermost object it reads. Observers are
/// generic parameters, so that the plain scan (`NoObserver`) compiles without any of it.
/// The scanner is lent to them in place (`inout`, though they only read it): a copy is made
/// just after the walk has stored its cursor, and waits for that store (see `position`).
protocol TopMembers {
    static var listens: Bool { get }
    /// The hash of the one key it listens for, where it listens for one (0: any key may
    /// match): other keys are passed over without a call when the scanner hashes.
    var keyHash: UInt64 { get }
    /// A key of the outermost object, read.
    mutating func key(_ key: ScannedString, in scanner: inout JSONScanner)
    /// Whether it wants the value of the member whose key came last.
    var wantsValue: Bool { get }
    /// The value of the member whose key came last, where it wants it: its hash, and the
    /// scanner just past it.
    mutating func value(hash: UInt64, in scanner: inout JSONScanner)
}

struct NoObserver: TopMembers {
    static var listens: Bool { false }
    var keyHash: UInt64 { 0 }
    var wantsValue: Bool { false }
    func key(_ key: ScannedString, in scanner: inout JSONScanner) {}
    func value(hash: UInt64, in scanner: inout JSONScanner) {}
}

/// A name a `MemberFinder` looks for.
protocol MemberName {
    /// The name's meaning hash.
    var hash: UInt64 { get }
    func names(_ key: ScannedString, in scanner: inout JSONScanner) -> Bool
}

extension JSONName.Short: MemberName {
    @inline(__always)
    func names(_ key: ScannedString, in scanner: inout JSONScanner) -> Bool { scanner.string(key, isShort: self) }
}

extension JSONName: MemberName {
    func names(_ key: ScannedString, in scanner: inout JSONScanner) -> Bool { scanner.string(key, is: self) }
}

/// Picks out the member with one name.
struct MemberFinder<Name: MemberName>: TopMembers {
    static var listens: Bool { true }
    let name: Name
    var found: ScannedValue?
    var repeated = false
    /// Where the value of the key just matched is looked for (right after its colon); nil
    /// while no key is matched. The scan itself does not track where values start.
    private var valueAfter: Int?

    init(name: Name) {
        self.name = name
    }

    var keyHash: UInt64 { name.hash }

    mutating func key(_ key: ScannedString, in scanner: inout JSONScanner) {
        if name.names(key, in: &scanner) { valueAfter = scanner.position }
    }

    var wantsValue: Bool { valueAfter != nil }

    mutating func value(hash: UInt64, in scanner: inout JSONScanner) {
        guard var start = valueAfter else { return }
        valueAfter = nil
        guard found == nil else {
            repeated = true
            return
        }
        while scanner.base[start] == 0x20 || scanner.base[start] == 0x0A || scanner.base[start] == 0x0D || scanner.base[start] == 0x09 { start += 1 }
        let end = scanner.position
        let kind = JSONScanner.kind(ofFirstByte: scanner.base[start])
        // Only a string's own bytes can hold a backslash, so one look over them tells.
        let escapes = kind == .string && scanner.holdsBackslash(start..<end)
        found = ScannedValue(kind: kind, hash: hash, start: start, end: end, hasEscapes: escapes)
    }
}

/// One open container while `scanValue` reads.
struct Frame {
    var isObject: Bool
    var accumulator: UInt64
    var count: Int
    var keyHash: UInt64
}

/// The open containers of one `scanValue` call: first in stack memory the caller lends, then,
/// for deeper texts, on the heap (never past `maxDepth`).
struct FrameStack {
    private(set) var base: UnsafeMutablePointer<Frame>
    private var capacity: Int
    private var onHeap = false

    init(_ inline: UnsafeMutableBufferPointer<Frame>) {
        base = inline.baseAddress!
        capacity = inline.count
    }

    /// Opens a container; the caller has checked the depth limit.
    @inline(__always)
    mutating func push(_ frame: Frame, at depth: inout Int) {
        if depth == capacity { grow() }
        (base + depth).initialize(to: frame)
        depth += 1
    }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<Frame>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: capacity)
        if onHeap { base.deallocate() }
        base = larger
        capacity *= 2
        onHeap = true
    }

    /// Gives back heap memory, if any was taken.
    func release() {
        if onHeap { base.deallocate() }
    }
}
