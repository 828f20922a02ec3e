import Builtin

/// Stage one of a simdjson-style reader: where the structural bytes of a text are, found 64
/// bytes at a time without looking at them one by one, a chunk ahead of the walk that reads
/// them (a chunk's positions stay in cache; the whole movie body's, 12 MB, would not).
///
/// Structural: `{ } [ ] : ,` outside strings, every quote that opens or closes a string, and
/// the first byte of every other run outside strings (numbers, literals, or stray bytes the
/// walk then rejects). Strings are told by their quotes' running parity (a prefix XOR).
///
/// What this benchmark leaves to the old reader, as a real one would (it finds the error and
/// where): a text with any backslash, control byte or non-ASCII byte marks the index `unsure`.
/// Movies have none, so the figures are of the fast path.
struct StructuralIndex {
    let base: UnsafePointer<UInt8>
    let count: Int
    /// Bytes classified at a time.
    static let chunk = 16 * 1024
    private let positions: UnsafeMutablePointer<UInt32>
    private var filled = 0
    private var cursor = 0
    private var classified = 0
    /// All ones where the last block ended inside a string.
    private var inString: UInt64 = 0
    /// 1 where the last block ended on a byte of a number or literal.
    private var inScalar: UInt64 = 0
    private(set) var unsure = false

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        base = bytes.baseAddress!
        count = bytes.count
        // A block writes up to 64 positions, sixteen of them whether used or not.
        positions = .allocate(capacity: Self.chunk + 64)
    }

    func release() { positions.deallocate() }

    /// The next structural position; `count` once the text is done.
    @inline(__always)
    mutating func next() -> Int {
        if cursor == filled { refill() }
        let position = Int(positions[cursor])
        cursor &+= 1
        return position
    }

    /// The byte at a position `next()` gave: 0 at the end.
    @inline(__always)
    func byte(_ position: Int) -> UInt8 { position < count ? base[position] : 0 }

    /// Classifies the next chunk that has any structural byte (one inside a long string may
    /// have none); at the end, lists `count` alone.
    @inline(never)
    mutating func refill() {
        cursor = 0
        filled = 0
        while filled == 0 {
            guard classified < count else {
                positions[0] = UInt32(count)
                filled = 1
                return
            }
            let end = min(count, classified + Self.chunk)
            var out = positions
            while classified + 64 <= end {
                out = classify(base + classified, at: classified, into: out)
                classified += 64
            }
            if classified < end {
                // The last, short block, padded with spaces.
                var padded = SIMD64<UInt8>(repeating: 0x20)
                withUnsafeMutableBytes(of: &padded) { $0.baseAddress!.copyMemory(from: base + classified, byteCount: end - classified) }
                out = withUnsafeBytes(of: &padded) { classify($0.baseAddress!.assumingMemoryBound(to: UInt8.self), at: classified, into: out) }
                classified = end
            }
            filled = out - positions
        }
    }

    /// Runs stage one over the whole text and throws the positions away: its cost alone.
    mutating func all() -> Int {
        var total = 0
        while classified < count {
            refill()
            total &+= filled
        }
        return total
    }

    @inline(__always)
    private static func splat(_ byte: UInt8) -> Builtin.Vec16xInt8 { SIMD16<UInt8>(repeating: byte)._storage._value }

    @inline(__always)
    private static func bits(_ mask: Builtin.Vec16xInt1) -> UInt64 { UInt64(UInt16(Builtin.bitcast_Vec16xInt1_Int16(mask))) }

    @inline(__always)
    private static func equal(_ lanes: Builtin.Vec16xInt8, _ byte: UInt8) -> Builtin.Vec16xInt1 { Builtin.cmp_eq_Vec16xInt8(lanes, splat(byte)) }

    #if WIDE
        @inline(__always)
        private static func splat32(_ byte: UInt8) -> Builtin.Vec32xInt8 { SIMD32<UInt8>(repeating: byte)._storage._value }

        @inline(__always)
        private static func bits(_ mask: Builtin.Vec32xInt1) -> UInt64 { UInt64(UInt32(Builtin.bitcast_Vec32xInt1_Int32(mask))) }

        @inline(__always)
        private static func equal(_ lanes: Builtin.Vec32xInt8, _ byte: UInt8) -> Builtin.Vec32xInt1 {
            Builtin.cmp_eq_Vec32xInt8(lanes, splat32(byte))
        }

        @inline(__always)
        private static func either(_ a: Builtin.Vec32xInt1, _ b: Builtin.Vec32xInt1) -> Builtin.Vec32xInt1 { Builtin.or_Vec32xInt1(a, b) }

        /// Bit i: the parity of the bits 0...i of `bits`, by a carry-less multiply by all ones.
        @inline(__always)
        private static func prefixParity(_ bits: UInt64) -> UInt64 {
            var product = SIMD2<UInt64>()
            product._storage._value = Builtin.int_x86_pclmulqdq(
                SIMD2<UInt64>(bits, 0)._storage._value, SIMD2<UInt64>(repeating: .max)._storage._value, Builtin.trunc_Int64_Int8(0._value))
            return product[0]
        }
    #endif

    @inline(__always)
    private static func either(_ a: Builtin.Vec16xInt1, _ b: Builtin.Vec16xInt1) -> Builtin.Vec16xInt1 { Builtin.or_Vec16xInt1(a, b) }

    /// One 64-byte block, the text's from `at`: its structural positions written from `out`;
    /// returns where the next block's go.
    @inline(__always)
    private mutating func classify(_ block: UnsafePointer<UInt8>, at start: Int, into out: UnsafeMutablePointer<UInt32>) -> UnsafeMutablePointer<
        UInt32
    > {
        #if WIDE
            // AVX2 (run.sh's second build, for Haswell and later): 32 bytes a compare, and
            // the running parity of quotes by one carry-less multiply.
            var quote: UInt64 = 0, backslash: UInt64 = 0, operators: UInt64 = 0, space: UInt64 = 0, low: UInt64 = 0
            for part in 0..<2 {
                let x = UnsafeRawPointer(block + 32 * part).loadUnaligned(as: SIMD32<UInt8>.self)._storage._value
                let shift = UInt64(32 * part)
                let folded = Builtin.or_Vec32xInt8(x, Self.splat32(0x20))
                quote |= Self.bits(Self.equal(x, 0x22)) << shift
                backslash |= Self.bits(Self.equal(x, 0x5C)) << shift
                let brackets = Self.either(Self.equal(folded, 0x7B), Self.equal(folded, 0x7D))
                operators |= Self.bits(Self.either(brackets, Self.either(Self.equal(x, 0x3A), Self.equal(x, 0x2C)))) << shift
                space |=
                    Self.bits(
                        Self.either(Self.either(Self.equal(x, 0x20), Self.equal(x, 0x0A)), Self.either(Self.equal(x, 0x0D), Self.equal(x, 0x09))))
                    << shift
                low |= Self.bits(Builtin.cmp_slt_Vec32xInt8(x, Self.splat32(0x20))) << shift
            }
            if backslash != 0 || low & ~space != 0 { unsure = true }
            var inside = Self.prefixParity(quote)
        #else
            var quote: UInt64 = 0, backslash: UInt64 = 0, operators: UInt64 = 0, space: UInt64 = 0, low: UInt64 = 0
            for part in 0..<4 {
                let x = UnsafeRawPointer(block + 16 * part).loadUnaligned(as: SIMD16<UInt8>.self)._storage._value
                let shift = UInt64(16 * part)
                // `[` and `]` with the 0x20 bit set are `{` and `}`; nothing else is.
                let folded = Builtin.or_Vec16xInt8(x, Self.splat(0x20))
                quote |= Self.bits(Self.equal(x, 0x22)) << shift
                backslash |= Self.bits(Self.equal(x, 0x5C)) << shift
                let brackets = Self.either(Self.equal(folded, 0x7B), Self.equal(folded, 0x7D))
                operators |= Self.bits(Self.either(brackets, Self.either(Self.equal(x, 0x3A), Self.equal(x, 0x2C)))) << shift
                space |=
                    Self.bits(
                        Self.either(Self.either(Self.equal(x, 0x20), Self.equal(x, 0x0A)), Self.either(Self.equal(x, 0x0D), Self.equal(x, 0x09))))
                    << shift
                // As signed bytes, control bytes and non-ASCII are those below 0x20.
                low |= Self.bits(Builtin.cmp_slt_Vec16xInt8(x, Self.splat(0x20))) << shift
            }
            if backslash != 0 || low & ~space != 0 { unsure = true }
            // Inside a string, from its opening quote up to (not including) its closing one.
            var inside = quote
            inside ^= inside << 1
            inside ^= inside << 2
            inside ^= inside << 4
            inside ^= inside << 8
            inside ^= inside << 16
            inside ^= inside << 32
        #endif
        inside ^= inString
        inString = UInt64(bitPattern: Int64(bitPattern: inside) >> 63)
        let scalar = ~(operators | space | inside | quote)
        let scalarStarts = scalar & ~(scalar << 1 | inScalar)
        inScalar = scalar >> 63
        var structural = operators & ~inside | quote | scalarStarts
        // Eight positions written whatever the count, then eight more, then one at a time: a
        // block's count varies, and a loop exiting on it would be mispredicted every block.
        let total = structural.nonzeroBitCount
        let offset = UInt32(truncatingIfNeeded: start)
        @inline(__always) func write(_ k: Int) {
            out[k] = offset &+ UInt32(truncatingIfNeeded: structural.trailingZeroBitCount)
            structural &= structural &- 1
        }
        for k in 0..<8 { write(k) }
        if total > 8 {
            for k in 8..<16 { write(k) }
            var k = 16
            while structural != 0 {
                write(k)
                k += 1
            }
        }
        return out + total
    }
}
