/// Writes JSON text into memory of its own, grown as needed. It has one owner (it is not
/// copyable), so a write is a bounds check and a copy: no uniqueness check and no reference
/// count, as an array's append would take.
public struct JSONWriter: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var capacity: Int
    /// Bytes written so far.
    /// How many bytes have been written.
    @usableFromInline var used = 0
    public var count: Int { used }

    /// An empty writer with room for `capacity` bytes before it first grows.
    public init(capacity: Int = 256) {
        self.capacity = Swift.max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The text written so far; valid until the next write.
    public var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: used) }

    /// The text written so far, as an array (a copy).
    public var bytes: [UInt8] { Array(written) }

    /// Room for `more` bytes at the end; the caller writes them and counts them.
    @inlinable @inline(__always)
    mutating func room(_ more: Int) -> UnsafeMutablePointer<UInt8> {
        if used + more > capacity { grow(toHold: used + more) }
        return base + used
    }

    @usableFromInline @inline(never)
    mutating func grow(toHold needed: Int) {
        let larger = Swift.max(capacity * 2, needed)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: used)
        base.deallocate()
        base = moved
        capacity = larger
    }

    @inlinable @inline(__always)
    mutating func append(_ source: UnsafePointer<UInt8>, _ length: Int) {
        room(length).initialize(from: source, count: length)
        used += length
    }

    // Inlinable: most writes come from other modules, one short call each.
    /// Appends `text` as it is: the caller vouches that it is valid JSON where it goes.
    @inlinable @inline(__always)
    public mutating func raw(_ text: StaticString) { append(text.utf8Start, text.utf8CodeUnitCount) }

    /// Appends one byte as it is.
    @inlinable @inline(__always)
    public mutating func raw(_ byte: UInt8) {
        room(1).initialize(to: byte)
        used += 1
    }

    /// Appends bytes as they are: the caller vouches that they are valid JSON where they go.
    @inlinable
    public mutating func raw(_ text: UnsafeBufferPointer<UInt8>) {
        guard let start = text.baseAddress else { return }
        append(start, text.count)
    }

    /// A whole number in decimal.
    public mutating func int(_ value: Int) {
        if value < 0 {
            raw(0x2D)
            // The magnitude of Int.min does not fit in Int.
            unsigned(value.magnitude)
        } else {
            unsigned(UInt(value))
        }
    }

    /// A non-negative whole number in decimal.
    public mutating func unsigned(_ value: UInt) {
        if value < 10 {
            raw(0x30 + UInt8(value))
            return
        }
        var length = 1
        var rest = value / 10
        while rest > 0 {
            length += 1
            rest /= 10
        }
        // The digits straight into place, last first.
        let start = room(length)
        var remaining = value
        for k in stride(from: length - 1, through: 0, by: -1) {
            start[k] = 0x30 + UInt8(remaining % 10)
            remaining /= 10
        }
        used += length
    }

    /// `true` or `false`.
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
        raw(0x22)
        // Runs of bytes that stand as they are go in one copy each.
        var index = 0
        var run = 0
        while index < value.count {
            let byte = value[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C && byte != 0xED {
                index += 1
                continue
            }
            if run < index { raw(UnsafeBufferPointer(rebasing: value[run..<index])) }
            index += 1
            if byte == 0xED && index + 1 < value.count && value[index] >= 0xA0 {
                // 1110_1101 10_1xxxxx 10_xxxxxx: U+D800 to U+DFFF.
                let scalar = 0xD000 | (UInt16(value[index] & 0x3F) << 6) | UInt16(value[index + 1] & 0x3F)
                raw("\\u")
                for shift in stride(from: 12, through: 0, by: -4) { raw(Self.hexDigit(UInt8((scalar >> UInt16(shift)) & 0xF))) }
                index += 2
            } else {
                switch byte {
                case 0x22: raw("\\\"")
                case 0x5C: raw("\\\\")
                case 0x0A: raw("\\n")
                case 0x0D: raw("\\r")
                case 0x09: raw("\\t")
                case 0..<0x20:
                    raw("\\u00")
                    raw(Self.hexDigit(byte >> 4))
                    raw(Self.hexDigit(byte & 0xF))
                default: raw(byte)
                }
            }
            run = index
        }
        if run < index { raw(UnsafeBufferPointer(rebasing: value[run..<index])) }
        raw(0x22)
    }

    /// `"key":`
    @inlinable
    public mutating func key(_ name: StaticString) {
        raw(0x22)
        raw(name)
        raw("\":")
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 + value : 0x61 + value - 10 }
}
