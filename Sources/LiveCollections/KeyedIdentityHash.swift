#if canImport(FoundationEssentials)
    import struct FoundationEssentials.UUID
#else
    import struct Foundation.UUID
#endif

/// Hashes of String and UUID ids for one diff, by a keyed folded-multiply hash of their bytes.
///
/// The standard library hashes with SipHash-1-3 through a resilient `Hasher`: about 500
/// instructions for a 36-character UUID string and 180 for a UUID, nine tenths and three fifths
/// of a diff of such ids. These take a few dozen. A UUID is equal to another exactly where its
/// bytes are. A String's bytes are only that where it is ASCII: Swift's String equality is
/// canonical equivalence, and "\u{212A}" (KELVIN SIGN) equals "K". So the pass over String ids
/// gives up as soon as one is not ASCII, and the diff hashes every id the standard way instead;
/// one way or the other, all ids of a diff are hashed alike.
///
/// Keyed per process, as the JSON reader's value hashes are, so that nobody can craft many ids
/// that share a hash without knowing the key (which would make matching quadratic).
@usableFromInline
enum KeyedIdentityHash {
    @usableFromInline static let key = UInt64.random(in: 1...UInt64.max)

    /// A 64x64->128 multiply folded to 64 bits: well mixed in the low bits the table uses.
    @inlinable @inline(__always)
    static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    /// The hash of `bytes`, or nil where one of them is not ASCII: sixteen bytes a multiply,
    /// the last of them read as words that may overlap the ones before (the length is hashed
    /// too, so that is the same function of the bytes for every string of that length).
    @inlinable
    static func hash(_ bytes: UnsafeRawBufferPointer, key: UInt64) -> Int? {
        let count = bytes.count
        var state = key ^ UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
        var seen: UInt64 = 0
        var offset = 0
        while count - offset > 16 {
            let a = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let b = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
            seen |= a | b
            state = fold(a ^ key, b ^ state)
            offset += 16
        }
        var a: UInt64 = 0
        var b: UInt64 = 0
        let rest = count - offset
        if rest >= 8 {
            a = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            b = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else if rest >= 4 {
            a = UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            b = UInt64(bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
        } else if rest > 0 {
            a = UInt64(bytes[offset]) | UInt64(bytes[offset + rest / 2]) << 8 | UInt64(bytes[count - 1]) << 16
        }
        seen |= a | b
        guard seen & 0x8080_8080_8080_8080 == 0 else { return nil }
        return Int(truncatingIfNeeded: fold(fold(a ^ key, b ^ state), 0x5895_4A2D_C5E8_E6E5 ^ key))
    }

    @inlinable
    static func string(_ id: String, key: UInt64) -> Int? {
        id.utf8.withContiguousStorageIfAvailable { hash(UnsafeRawBufferPointer($0), key: key) } ?? nil
    }

    @inlinable
    static func uuid(_ id: UUID, key: UInt64) -> Int {
        withUnsafeBytes(of: id.uuid) { bytes in
            let a = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
            let b = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            return Int(truncatingIfNeeded: fold(fold(a ^ key, b ^ 0x9E37_79B9_7F4A_7C15), 0x5895_4A2D_C5E8_E6E5 ^ key))
        }
    }

    /// Fills `hashes` with the hashes of `old`'s ids and then `new`'s, where the ids are
    /// Strings or UUIDs; false, leaving them to be filled the standard way, for other ids and
    /// where a String id is not ASCII.
    @inlinable
    static func fill<Item: UniquelyIdentifiable>(
        _ old: UnsafeBufferPointer<Item>, _ new: UnsafeBufferPointer<Item>, into hashes: UnsafeMutableBufferPointer<Int>
    ) -> Bool {
        let key = Self.key
        /// Each id's hash in its place, until one has none.
        func each(_ hash: (Item) -> Int?) -> Bool {
            for i in old.indices {
                guard let value = hash(old[i]) else { return false }
                hashes[i] = value
            }
            for j in new.indices {
                guard let value = hash(new[j]) else { return false }
                hashes[old.count + j] = value
            }
            return true
        }
        // The type tests are constants once the function is specialised for `Item`.
        if Item.UniqueIDType.self == UUID.self { return each { uuid(unsafeBitCast($0.uniqueID, to: UUID.self), key: key) } }
        guard Item.UniqueIDType.self == String.self else { return false }
        return each { string(unsafeBitCast($0.uniqueID, to: String.self), key: key) }
    }
}
