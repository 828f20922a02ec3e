// The JSON scanner's walk as it was before the faster one (commit 3f0682f), kept frozen as the
// reference that ReferenceComparisonTests holds the library's scanner to: the same texts
// accepted, the same errors at the same offsets, the same hashes. Not to be edited, except to
// keep it compiling. Only what changed is kept here: the value loop, its frames and the
// walking helpers; the rest (strings by the general loop, numbers) is the library's own.
@testable import ByteJSON

/// A validating, hashing reader over UTF-8 bytes that accepts exactly RFC 8259 JSON.
///
/// It builds no tree: `scanValue()` checks a whole value (any depth up to `maxDepth`, without
/// recursion) and returns its meaning hash and range; the member and element helpers walk one
/// level so that callers can pick out what they need.
struct ReferenceScanner {
    let base: UnsafePointer<UInt8>
    let count: Int
    var position: Int
    let maxDepth: Int
    /// Containers entered with `beginObject`/`beginArray` and not yet left: the depth at the
    /// cursor, so that `maxDepth` bounds the whole text however it is walked. A reader that
    /// starts inside a text sets it to the depth it starts at.
    var openDepth = 0
    /// False: check only, and report every hash as 0 (about twice as fast).
    var hashing = true
    /// The process's hash key, read once here rather than on every string.
    let key = ValueHash.processKey
    private let frames = ReferenceFrameStack()

    /// `bytes` must stay valid while the scanner is used.
    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) {
        // An empty buffer may have no address; any readable address of zero length will do.
        base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
        count = bytes.count
        position = 0
        self.maxDepth = maxDepth
    }

    /// Checks that `bytes` hold exactly one JSON value, with only whitespace around it.
    static func validate(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) throws(JSONError) {
        var scanner = ReferenceScanner(bytes, maxDepth: maxDepth)
        scanner.hashing = false
        _ = try scanner.scanDocument()
    }

    /// Reads the one value the text holds, and checks nothing but whitespace follows it.
    mutating func scanDocument() throws(JSONError) -> ScannedValue {
        let value = try scanValue()
        skipWhitespace()
        if position < count { throw JSONError(.trailingContent, at: position) }
        return value
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while position < count {
            let byte = base[position]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            position += 1
        }
    }

    /// The next byte after whitespace, without consuming it; nil at the end.
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return position < count ? base[position] : nil
    }

    // MARK: - Whole values

    /// Reads one complete value after optional whitespace.
    mutating func scanValue() throws(JSONError) -> ScannedValue {
        skipWhitespace()
        let start = position
        var depth = 0
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
                    try push(&depth, ReferenceFrame(isObject: true, accumulator: 0, count: 0, keyHash: try scanKeyAndColon().hash))
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
                    try push(&depth, ReferenceFrame(isObject: false, accumulator: ValueHash.arrayTag, count: 0, keyHash: 0))
                    continue value
                }
            case 0x22:
                let string = try scanString()
                if depth == 0 {
                    return ScannedValue(kind: .string, hash: string.hash, start: start, end: position, hasEscapes: string.hasEscapes)
                }
                hash = string.hash
            case 0x2D, 0x30...0x39: hash = try scanNumber()
            case 0x74: hash = try scanLiteral("true", ValueHash.true)
            case 0x66: hash = try scanLiteral("false", ValueHash.false)
            case 0x6E: hash = try scanLiteral("null", ValueHash.null)
            case let byte: throw JSONError(.unexpectedByte(byte, expected: "a value"), at: position)
            }
            // Hand the finished value to its container, closing containers that end here.
            while depth > 0 {
                let top = frames.base + (depth - 1)
                if hashing {
                    top.pointee.accumulator =
                        top.pointee.isObject
                        ? top.pointee.accumulator &+ ValueHash.member(key: top.pointee.keyHash, value: hash)
                        : ValueHash.mix(top.pointee.accumulator, hash)
                }
                top.pointee.count += 1
                skipWhitespace()
                guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
                let byte = base[position]
                let isObject = top.pointee.isObject
                if byte == 0x2C {  // ,
                    position += 1
                    if isObject { top.pointee.keyHash = try scanKeyAndColon().hash }
                    continue value
                }
                guard byte == (isObject ? 0x7D : 0x5D) else {
                    throw JSONError(.unexpectedByte(byte, expected: isObject ? "',' or '}'" : "',' or ']'"), at: position)
                }
                position += 1
                depth -= 1
                hash =
                    isObject
                    ? ValueHash.object(memberSum: top.pointee.accumulator, count: top.pointee.count)
                    : ValueHash.mix(top.pointee.accumulator, UInt64(top.pointee.count))
            }
            return ScannedValue(kind: Self.kind(ofFirstByte: base[start]), hash: hashing ? hash : 0, start: start, end: position)
        }
    }

    /// Opens a container; the caller has checked `depth < maxDepth`.
    @inline(__always)
    private func push(_ depth: inout Int, _ frame: ReferenceFrame) throws(JSONError) {
        if depth == frames.capacity { frames.grow() }
        (frames.base + depth).initialize(to: frame)
        depth += 1
    }

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
    mutating func expect(_ byte: UInt8, _ description: String) throws(JSONError) {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        guard base[position] == byte else {
            throw JSONError(.unexpectedByte(base[position], expected: description), at: position)
        }
        position += 1
    }

    /// At an object: enters it and returns its first key (nil for `{}`).
    mutating func beginObject() throws(JSONError) -> ScannedString? {
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
    mutating func nextKey() throws(JSONError) -> ScannedString? {
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
    mutating func beginArray() throws(JSONError) -> Bool {
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
    mutating func nextElement() throws(JSONError) -> Bool {
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

/// One open container while `scanValue` reads.
struct ReferenceFrame {
    var isObject: Bool
    var accumulator: UInt64
    var count: Int
    var keyHash: UInt64
}

/// The open containers of `scanValue`, in memory that grows as deep as the text goes (never
/// past `maxDepth`). Copies of a scanner share it; a scanner is used by one thread, and
/// `scanValue` never runs inside another, so they never use it at once.
final class ReferenceFrameStack {
    private(set) var base: UnsafeMutablePointer<ReferenceFrame>
    private(set) var capacity: Int

    init() {
        capacity = 32
        base = .allocate(capacity: capacity)
    }

    func grow() {
        let larger = UnsafeMutablePointer<ReferenceFrame>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: capacity)
        base.deallocate()
        base = larger
        capacity *= 2
    }

    deinit { base.deallocate() }
}

// What did not change, taken from the library: every string through the general loop (all of
// them went there before the 16-byte fast path), numbers, and integers by their parts (before
// the fast path for plain digits).
extension ReferenceScanner {
    var library: ByteJSON.JSONScanner {
        var scanner = ByteJSON.JSONScanner(UnsafeBufferPointer(start: base, count: count), maxDepth: maxDepth)
        scanner.hashing = hashing
        scanner.position = position
        return scanner
    }

    mutating func scanString() throws(JSONError) -> ScannedString {
        var scanner = library
        defer { position = scanner.position }
        return try scanner.scanLongString()
    }

    mutating func scanNumber() throws(JSONError) -> UInt64 {
        var scanner = library
        defer { position = scanner.position }
        return try scanner.scanNumber()
    }

    func exactInteger(_ range: Range<Int>) -> Int64? { library.exactIntegerByParts(range) }

    func string(_ string: ScannedString, equals expected: [UInt8]) -> Bool { library.string(string, equals: expected) }
}
