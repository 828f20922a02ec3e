/// What kind of JSON value was read.
public enum JSONKind: UInt8, Sendable {
    case null, bool, number, string, array, object
}

/// A value read by `JSONScanner.scanValue()`: its kind, meaning hash and byte range.
public struct ScannedValue: Sendable, Equatable {
    public var kind: JSONKind
    public var hash: UInt64
    public var start: Int
    public var end: Int
}

/// A string read by the scanner: the bytes between its quotes, and whether they hold escapes.
public struct ScannedString: Sendable, Equatable {
    public var hash: UInt64
    /// First byte after the opening quote.
    public var start: Int
    /// The closing quote.
    public var end: Int
    public var hasEscapes: Bool
}

/// A validating, hashing reader over UTF-8 bytes that accepts exactly RFC 8259 JSON.
///
/// It builds no tree: `scanValue()` checks a whole value (any depth up to `maxDepth`, without
/// recursion) and returns its meaning hash and range; the member and element helpers walk one
/// level so that callers can pick out what they need.
public struct JSONScanner {
    public let base: UnsafePointer<UInt8>
    public let count: Int
    public var position: Int
    public let maxDepth: Int
    private var frames: [Frame] = []

    private struct Frame {
        var isObject: Bool
        var accumulator: UInt64
        var count: Int
        var keyHash: UInt64
    }

    /// `bytes` must stay valid while the scanner is used.
    public init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) {
        // An empty buffer may have no address; any readable address of zero length will do.
        base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
        count = bytes.count
        position = 0
        self.maxDepth = maxDepth
        frames.reserveCapacity(16)
    }

    /// Checks that `bytes` hold exactly one JSON value, with only whitespace around it.
    public static func validate(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) throws(JSONError) {
        var scanner = JSONScanner(bytes, maxDepth: maxDepth)
        _ = try scanner.scanDocument()
    }

    /// Reads the one value the text holds, and checks nothing but whitespace follows it.
    public mutating func scanDocument() throws(JSONError) -> ScannedValue {
        let value = try scanValue()
        skipWhitespace()
        if position < count { throw JSONError(.trailingContent, at: position) }
        return value
    }

    @inline(__always)
    public mutating func skipWhitespace() {
        while position < count {
            let byte = base[position]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            position += 1
        }
    }

    /// The next byte after whitespace, without consuming it; nil at the end.
    public mutating func peek() -> UInt8? {
        skipWhitespace()
        return position < count ? base[position] : nil
    }

    // MARK: - Whole values

    /// Reads one complete value after optional whitespace.
    public mutating func scanValue() throws(JSONError) -> ScannedValue {
        skipWhitespace()
        let start = position
        frames.removeAll(keepingCapacity: true)
        value: while true {
            skipWhitespace()
            guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
            var hash: UInt64
            switch base[position] {
            case 0x7B:  // {
                try pushDepth()
                position += 1
                skipWhitespace()
                if position < count && base[position] == 0x7D {
                    position += 1
                    hash = ValueHash.object(memberSum: 0, count: 0)
                } else {
                    let key = try scanKeyAndColon()
                    frames.append(Frame(isObject: true, accumulator: 0, count: 0, keyHash: key.hash))
                    continue value
                }
            case 0x5B:  // [
                try pushDepth()
                position += 1
                skipWhitespace()
                if position < count && base[position] == 0x5D {
                    position += 1
                    hash = ValueHash.mix(ValueHash.arrayTag, 0)
                } else {
                    frames.append(Frame(isObject: false, accumulator: ValueHash.arrayTag, count: 0, keyHash: 0))
                    continue value
                }
            case 0x22: hash = try scanString().hash
            case 0x2D, 0x30...0x39: hash = try scanNumber()
            case 0x74: hash = try scanLiteral("true", ValueHash.true)
            case 0x66: hash = try scanLiteral("false", ValueHash.false)
            case 0x6E: hash = try scanLiteral("null", ValueHash.null)
            case let byte: throw JSONError(.unexpectedByte(byte, expected: "a value"), at: position)
            }
            // Hand the finished value to its container, closing containers that end here.
            while let top = frames.indices.last {
                if frames[top].isObject {
                    frames[top].accumulator &+= ValueHash.member(key: frames[top].keyHash, value: hash)
                } else {
                    frames[top].accumulator = ValueHash.mix(frames[top].accumulator, hash)
                }
                frames[top].count += 1
                skipWhitespace()
                guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
                let byte = base[position]
                let isObject = frames[top].isObject
                if byte == 0x2C {  // ,
                    position += 1
                    if isObject { frames[top].keyHash = try scanKeyAndColon().hash }
                    continue value
                }
                guard byte == (isObject ? 0x7D : 0x5D) else {
                    throw JSONError(.unexpectedByte(byte, expected: isObject ? "',' or '}'" : "',' or ']'"), at: position)
                }
                position += 1
                let frame = frames.removeLast()
                hash = isObject
                    ? ValueHash.object(memberSum: frame.accumulator, count: frame.count)
                    : ValueHash.mix(frame.accumulator, UInt64(frame.count))
            }
            return ScannedValue(kind: Self.kind(ofFirstByte: base[start]), hash: hash, start: start, end: position)
        }
    }

    private mutating func pushDepth() throws(JSONError) {
        if frames.count >= maxDepth { throw JSONError(.tooDeep(limit: maxDepth), at: position) }
    }

    private mutating func scanKeyAndColon() throws(JSONError) -> ScannedString {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        guard base[position] == 0x22 else {
            throw JSONError(.unexpectedByte(base[position], expected: "a string key"), at: position)
        }
        let key = try scanString()
        try expect(0x3A, "':'")
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
    public mutating func expect(_ byte: UInt8, _ description: String) throws(JSONError) {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        guard base[position] == byte else {
            throw JSONError(.unexpectedByte(base[position], expected: description), at: position)
        }
        position += 1
    }

    /// At an object: enters it and returns its first key (nil for `{}`).
    public mutating func beginObject() throws(JSONError) -> ScannedString? {
        try expect(0x7B, "'{'")
        skipWhitespace()
        if position < count && base[position] == 0x7D {
            position += 1
            return nil
        }
        return try scanKeyAndColon()
    }

    /// After a member's value: the next key, or nil where the object ends.
    public mutating func nextKey() throws(JSONError) -> ScannedString? {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        switch base[position] {
        case 0x2C:
            position += 1
            return try scanKeyAndColon()
        case 0x7D:
            position += 1
            return nil
        case let byte: throw JSONError(.unexpectedByte(byte, expected: "',' or '}'"), at: position)
        }
    }

    /// At an array: enters it and says whether an element follows (false for `[]`).
    public mutating func beginArray() throws(JSONError) -> Bool {
        try expect(0x5B, "'['")
        skipWhitespace()
        if position < count && base[position] == 0x5D {
            position += 1
            return false
        }
        return true
    }

    /// After an element: whether another follows (false where the array ends).
    public mutating func nextElement() throws(JSONError) -> Bool {
        skipWhitespace()
        guard position < count else { throw JSONError(.unexpectedEnd, at: position) }
        switch base[position] {
        case 0x2C:
            position += 1
            return true
        case 0x5D:
            position += 1
            return false
        case let byte: throw JSONError(.unexpectedByte(byte, expected: "',' or ']'"), at: position)
        }
    }
}
