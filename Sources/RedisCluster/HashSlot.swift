/// Redis Cluster's map of keys to its 16,384 slots: CRC16 (the XMODEM variant, as the cluster
/// specification gives it) of the key, modulo 16,384. Where the key holds a hash tag, the
/// first `{` followed later by a `}` with something between them, only that something is
/// hashed, so that keys sharing a tag share a slot.
package enum HashSlot {
    package static let count = 16_384

    package static func of(_ key: some Collection<UInt8>) -> Int {
        if let open = key.firstIndex(of: UInt8(ascii: "{")) {
            let inside = key[key.index(after: open)...]
            if let close = inside.firstIndex(of: UInt8(ascii: "}")), close != inside.startIndex {
                return Int(crc16(inside[..<close]) & 0x3FFF)
            }
        }
        return Int(crc16(key) & 0x3FFF)
    }

    /// A short hash tag (`{tag}`'s inside) for each slot, whose keys fall in that slot: the
    /// first of "0", "1", … (base 36) that does.
    package static let tags: [String] = {
        var tags = [String?](repeating: nil, count: count)
        var left = count
        var number = 0
        while left > 0 {
            let tag = String(number, radix: 36)
            let slot = Int(crc16(tag.utf8) & 0x3FFF)
            if tags[slot] == nil {
                tags[slot] = tag
                left -= 1
            }
            number += 1
        }
        return tags.map { $0! }
    }()

    static func crc16(_ bytes: some Collection<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes { crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)] }
        return crc
    }

    /// CRC16-CCITT's table for the polynomial 0x1021, one entry a byte.
    private static let table: [UInt16] = (0..<256).map { byte in
        var crc = UInt16(byte) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }
}
