/// Writes JSON text into a byte buffer.
public struct JSONWriter {
    public var bytes: [UInt8] = []

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    public mutating func raw(_ byte: UInt8) { bytes.append(byte) }

    public mutating func raw(_ text: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: text) }

    public mutating func int(_ value: Int) {
        if value < 0 {
            bytes.append(0x2D)
            // The magnitude of Int.min does not fit in Int.
            unsigned(value.magnitude)
        } else {
            unsigned(UInt(value))
        }
    }

    public mutating func unsigned(_ value: UInt) {
        if value < 10 {
            bytes.append(0x30 + UInt8(value))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var remaining = value
            var index = buffer.count
            while remaining > 0 {
                index -= 1
                buffer[index] = 0x30 + UInt8(remaining % 10)
                remaining /= 10
            }
            bytes.append(contentsOf: buffer[index...])
        }
    }

    public mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }

    /// A string, quoted and escaped as RFC 8259 requires.
    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(generalizedUTF8: $0) }
    }

    /// A string given as the scanner decodes one: UTF-8, where a lone surrogate (which RFC
    /// 8259's grammar allows in an escape) stands as its 3-byte generalized UTF-8. Such a
    /// surrogate is written back as its escape, so that different strings never look alike.
    public mutating func string(generalizedUTF8 value: UnsafeBufferPointer<UInt8>) {
        bytes.append(0x22)
        var index = 0
        while index < value.count {
            let byte = value[index]
            index += 1
            if byte == 0xED && index + 1 < value.count && value[index] >= 0xA0 {
                // 1110_1101 10_1xxxxx 10_xxxxxx: U+D800 to U+DFFF.
                let scalar = 0xD000 | (UInt16(value[index] & 0x3F) << 6) | UInt16(value[index + 1] & 0x3F)
                raw("\\u")
                for shift in stride(from: 12, through: 0, by: -4) { bytes.append(Self.hexDigit(UInt8((scalar >> UInt16(shift)) & 0xF))) }
                index += 2
                continue
            }
            switch byte {
            case 0x22: raw("\\\"")
            case 0x5C: raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0..<0x20:
                raw("\\u00")
                bytes.append(Self.hexDigit(byte >> 4))
                bytes.append(Self.hexDigit(byte & 0xF))
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
    }

    /// `"key":`
    public mutating func key(_ name: StaticString) {
        bytes.append(0x22)
        raw(name)
        raw("\":")
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 + value : 0x61 + value - 10 }
}
