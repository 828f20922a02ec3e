#if canImport(Glibc)
    import Glibc
#endif

/// One item of the array a reader reads: its meaning hash and range, and its `id` member's
/// value hash and start (what the service's reader needs of each item before its records).
struct ReadItem: Equatable {
    var hash: UInt64
    var start: Int
    var end: Int
    var idHash: UInt64
    var idStart: Int
}

/// How the walk hashes object keys: as the scanner does, or not at all (wrong hashes, a bound
/// on what remembering keys could save at most).
protocol KeyHashing {
    static func hash(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, count: Int, key: UInt64) -> UInt64
}

enum HashedKeys: KeyHashing {
    @inline(__always)
    static func hash(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, count: Int, key: UInt64) -> UInt64 {
        TwoStageWalk.plainHash(base, start, end, count: count, key: key)
    }
}

enum FreeKeys: KeyHashing {
    @inline(__always)
    static func hash(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, count: Int, key: UInt64) -> UInt64 { UInt64(end &- start) }
}

/// Stage two: the array's items read from the structural positions alone, with the meaning
/// hashes ByteJSON's scanner gives (the same `ValueHash` and number reading), the id found by
/// its key. A string's both quotes are structural, so its length is known before it is read;
/// numbers are read by the scanner's own code. Anything unexpected returns nil, where a real
/// reader would hand the text to the old one for the error and its place.
enum TwoStageWalk {
    static func items<Keys: KeyHashing>(_ bytes: UnsafeBufferPointer<UInt8>, id name: JSONName, keys: Keys.Type, into items: inout [ReadItem]) -> Bool
    {
        var index = StructuralIndex(bytes)
        defer { index.release() }
        var scanner = JSONScanner(bytes)
        let read = withUnsafeTemporaryAllocation(of: Frame.self, capacity: 512) { frames in
            array(&index, &scanner, frames.baseAddress!, name, keys, &items)
        }
        return read && !index.unsure
    }

    private static func array<Keys: KeyHashing>(
        _ index: inout StructuralIndex, _ scanner: inout JSONScanner, _ frames: UnsafeMutablePointer<Frame>, _ name: JSONName, _ keys: Keys.Type,
        _ items: inout [ReadItem]
    ) -> Bool {
        guard index.byte(index.next()) == 0x5B else { return false }
        var position = index.next()
        if index.byte(position) == 0x5D { return index.next() == index.count }
        while true {
            guard let item = value(at: position, &index, &scanner, frames, name, keys) else { return false }
            items.append(item)
            let after = index.next()
            switch index.byte(after) {
            case 0x2C: position = index.next()
            case 0x5D: return index.next() == index.count
            default: return false
            }
        }
    }

    /// Whether a number or literal may end before `byte`.
    @inline(__always)
    private static func ends(before byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x0A, 0x0D, 0x09, 0x2C, 0x7D, 0x5D, 0x3A, 0x7B, 0x5B, 0x22: true
        default: false
        }
    }

    /// A plain string's hash from its bytes, as `StreamHasher` gives it.
    @inline(__always)
    static func plainHash(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, count: Int, key: UInt64) -> UInt64 {
        var state = ValueHash.stringTag ^ key
        var position = start
        while position + 8 <= end {
            state = ValueHash.mix(state, UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
            position += 8
        }
        let rest = end - position
        var pending: UInt64 = 0
        if rest > 0 {
            if position + 8 <= count {
                pending = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self) & ~(UInt64.max << UInt64(rest * 8))
            } else {
                for k in 0..<rest { pending |= UInt64(base[position + k]) << UInt64(k * 8) }
            }
        }
        return ValueHash.mix(state ^ UInt64(end - start), pending ^ UInt64(rest) << 56)
    }

    /// At an object's key: its hash, the cursor past its colon; nil where it is not a key.
    @inline(__always)
    private static func key<Keys: KeyHashing>(at quote: Int, _ index: inout StructuralIndex, key: UInt64, _ keys: Keys.Type) -> (
        hash: UInt64, start: Int, end: Int
    )? {
        guard index.byte(quote) == 0x22 else { return nil }
        let close = index.next()
        guard index.byte(close) == 0x22, index.byte(index.next()) == 0x3A else { return nil }
        return (Keys.hash(index.base, quote + 1, close, count: index.count, key: key), quote + 1, close)
    }

    @inline(__always)
    private static func names(_ name: JSONName, _ key: (hash: UInt64, start: Int, end: Int), in base: UnsafePointer<UInt8>) -> Bool {
        key.hash == name.hash && key.end - key.start == name.bytes.count
            && name.bytes.withUnsafeBufferPointer { memcmp(base + key.start, $0.baseAddress!, $0.count) == 0 }
    }

    /// The value whose first structural position is `first`, without recursion.
    @inline(__always)
    private static func value<Keys: KeyHashing>(
        at first: Int, _ index: inout StructuralIndex, _ scanner: inout JSONScanner, _ frames: UnsafeMutablePointer<Frame>, _ name: JSONName,
        _ keys: Keys.Type
    ) -> ReadItem? {
        let base = index.base, count = index.count, hashKey = scanner.key
        var depth = 0
        var top = Frame(isObject: false, accumulator: 0, count: 0, keyHash: 0)
        var position = first
        var id: (hash: UInt64, start: Int)?
        // Where the value of the id's key starts, while that value is being read.
        var idStart: Int?
        var end = 0
        value: while true {
            var hash: UInt64
            switch index.byte(position) {
            case 0x7B:
                guard depth < 511 else { return nil }
                let next = index.next()
                if index.byte(next) == 0x7D {
                    hash = ValueHash.object(memberSum: 0, count: 0)
                    end = next + 1
                } else {
                    guard let key = key(at: next, &index, key: hashKey, keys) else { return nil }
                    if depth > 0 { frames[depth - 1] = top }
                    top = Frame(isObject: true, accumulator: 0, count: 0, keyHash: key.hash)
                    depth += 1
                    position = index.next()
                    if depth == 1 && names(name, key, in: base) { idStart = position }
                    continue value
                }
            case 0x5B:
                guard depth < 511 else { return nil }
                let next = index.next()
                if index.byte(next) == 0x5D {
                    hash = ValueHash.mix(ValueHash.arrayTag, 0)
                    end = next + 1
                } else {
                    if depth > 0 { frames[depth - 1] = top }
                    top = Frame(isObject: false, accumulator: ValueHash.arrayTag, count: 0, keyHash: 0)
                    depth += 1
                    position = next
                    continue value
                }
            case 0x22:
                let close = index.next()
                guard index.byte(close) == 0x22 else { return nil }
                hash = plainHash(base, position + 1, close, count: count, key: hashKey)
                end = close + 1
            case 0x2D, 0x30...0x39:
                scanner.position = position
                guard let number = try? scanner.scanAnyNumber() else { return nil }
                hash = number
                end = scanner.position
                guard end == count || ends(before: base[end]) else { return nil }
            case 0x74, 0x66, 0x6E:
                let (word, length, literal): (UInt32, Int, UInt64) =
                    switch base[position] {
                    case 0x74: (0x6575_7274, 4, ValueHash.true)
                    case 0x66: (0x6573_6C61, 5, ValueHash.false)
                    default: (0x6C6C_756E, 4, ValueHash.null)
                    }
                guard position + length <= count,
                    UnsafeRawPointer(base + position + length - 4).loadUnaligned(as: UInt32.self) == word
                else { return nil }
                hash = literal
                end = position + length
                guard end == count || ends(before: base[end]) else { return nil }
            default:
                return nil
            }
            // Hand the finished value to its container, closing containers that end here.
            while depth > 0 {
                if depth == 1, let start = idStart {
                    idStart = nil
                    if id == nil { id = (hash, start) }
                }
                top.accumulator =
                    top.isObject
                    ? top.accumulator &+ ValueHash.member(key: top.keyHash, value: hash)
                    : ValueHash.mix(top.accumulator, hash)
                top.count += 1
                let next = index.next()
                let byte = index.byte(next)
                if byte == 0x2C {
                    position = index.next()
                    if top.isObject {
                        guard let key = key(at: position, &index, key: hashKey, keys) else { return nil }
                        top.keyHash = key.hash
                        position = index.next()
                        if depth == 1 && names(name, key, in: base) { idStart = position }
                    }
                    continue value
                }
                guard byte == (top.isObject ? 0x7D : 0x5D) else { return nil }
                end = next + 1
                hash =
                    top.isObject
                    ? ValueHash.object(memberSum: top.accumulator, count: top.count)
                    : ValueHash.mix(top.accumulator, UInt64(top.count))
                depth -= 1
                if depth > 0 { top = frames[depth - 1] }
            }
            return ReadItem(hash: hash, start: first, end: end, idHash: id?.hash ?? 0, idStart: id?.start ?? -1)
        }
    }
}
