/// A fast 64-bit hash of a JSON value's *meaning*: equal values hash equally whatever their
/// spelling (key order, number notation, string escapes). Unequal values may collide, so a
/// hash match is confirmed by comparing the values; a mismatch proves they differ.
///
/// Strings and numbers are hashed under a key drawn once per process, so that nobody can
/// craft many different ids that share a hash (which would make matching quadratic); hashes
/// are therefore only comparable within one process.
@usableFromInline package enum ValueHash {
    @usableFromInline static let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
    @usableFromInline static let processKey = UInt64.random(in: 1...UInt64.max)

    /// Folded 64x64->128 multiply of the two inputs: cheap and well mixed.
    @inlinable @inline(__always)
    package static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = (a ^ multiplier).multipliedFullWidth(by: b ^ 0xE703_7ED1_A0B4_28DB)
        return product.high ^ product.low
    }

    package static let null: UInt64 = 0x6E75_6C6C_6E75_6C6C
    package static let `true`: UInt64 = 0x7472_7565_7472_7565
    package static let `false`: UInt64 = 0x6661_6C73_6566_616C
    @usableFromInline static let stringTag: UInt64 = 0x7374_7269_6E67_0001
    @usableFromInline static let numberTag: UInt64 = 0x6E75_6D62_6572_0002
    @usableFromInline static let arrayTag: UInt64 = 0x6172_7261_7900_0003
    @usableFromInline static let objectTag: UInt64 = 0x6F62_6A65_6374_0004

    /// An object member: key and value together; members are summed, so order does not count.
    @inlinable @inline(__always)
    package static func member(key: UInt64, value: UInt64) -> UInt64 { mix(key, value &+ 0x2545_F491_4F6C_DD1D) }

    /// A number whose significant digits fit in a UInt64: `0.mantissa × 10^exponent`, the
    /// mantissa without trailing zeros (so every value has one spelling).
    @inlinable @inline(__always)
    static func number(negative: Bool, mantissa: UInt64, exponent: Int, key: UInt64) -> UInt64 {
        mantissa == 0
            ? mix(numberTag, 0)
            : mix(mix(numberTag ^ key ^ (negative ? 1 : 0), mantissa), UInt64(bitPattern: Int64(exponent)))
    }

    /// An object from the sum of its members' hashes.
    @inlinable @inline(__always)
    package static func object(memberSum: UInt64, count: Int) -> UInt64 { mix(memberSum ^ objectTag, UInt64(count)) }
}

/// Hashes a byte stream the same way however it is cut into pieces.
@usableFromInline
struct StreamHasher {
    @usableFromInline var state: UInt64
    @usableFromInline var pending: UInt64 = 0
    @usableFromInline var pendingCount = 0
    @usableFromInline var length = 0

    @inlinable init(seed: UInt64, key: UInt64) { state = seed ^ key }

    @inlinable @inline(__always)
    mutating func feed(word: UInt64) {
        length &+= 8
        if pendingCount == 0 {
            state = ValueHash.mix(state, word)
        } else {
            let shift = UInt64(pendingCount * 8)
            state = ValueHash.mix(state, pending | (word << shift))
            pending = word >> (64 - shift)
        }
    }

    @inlinable @inline(__always)
    mutating func feed(byte: UInt8) {
        length &+= 1
        pending |= UInt64(byte) << UInt64(pendingCount * 8)
        pendingCount += 1
        if pendingCount == 8 {
            state = ValueHash.mix(state, pending)
            pending = 0
            pendingCount = 0
        }
    }

    /// Feeds the low `count` bytes (1 to 7) of `word`; its other bytes must be zero.
    @inlinable @inline(__always)
    mutating func feed(partial word: UInt64, count: Int) {
        length &+= count
        pending |= word << UInt64(pendingCount * 8)
        let total = pendingCount + count
        if total >= 8 {
            state = ValueHash.mix(state, pending)
            // The bytes of `word` that did not fit: pendingCount was at least 1 here.
            pending = word >> UInt64((8 - pendingCount) * 8)
            pendingCount = total - 8
        } else {
            pendingCount = total
        }
    }

    /// Feeds `count` bytes (0 to 16) from `bytes`, which must have 16 readable bytes.
    @inlinable @inline(__always)
    mutating func feed(plain bytes: UnsafeRawPointer, count: Int) {
        let first = bytes.loadUnaligned(as: UInt64.self)
        if count < 8 {
            if count > 0 { feed(partial: first & ~(UInt64.max << UInt64(count * 8)), count: count) }
            return
        }
        feed(word: first)
        let second = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        if count == 16 {
            feed(word: second)
        } else if count > 8 {
            feed(partial: second & ~(UInt64.max << UInt64((count - 8) * 8)), count: count - 8)
        }
    }

    @inlinable
    func finish() -> UInt64 {
        ValueHash.mix(state ^ UInt64(length), pending ^ UInt64(pendingCount) << 56)
    }
}
