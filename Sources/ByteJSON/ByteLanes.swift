import Builtin

/// Sixteen bytes of text classified at once, with the processor's own vector compares and
/// movemask (SSE2's `pcmpeqb` and `pmovmskb` on x86-64, the like elsewhere): a bit a byte.
///
/// The standard library's `SIMD16` compares lower to vector compares, but it has no way to
/// turn a lane mask into bits, and gathering them lane by lane or by multiplication costs more
/// than the compares (`make bench-blocks`: 440 and 1,300 MB/s against 3,500–4,900 this way).
/// `Builtin` (the experimental `BuiltinModule` feature) has the bitcast from 16 one-bit lanes to
/// a 16-bit integer, which LLVM lowers to one movemask; it is used here and nowhere else.
@usableFromInline
struct ByteLanes {
    @usableFromInline let lanes: SIMD16<UInt8>

    @inlinable @inline(__always)
    init(_ pointer: UnsafeRawPointer) { lanes = pointer.loadUnaligned(as: SIMD16<UInt8>.self) }

    /// Bits of the bytes equal to `byte`.
    @inlinable @inline(__always)
    func equal(_ byte: UInt8) -> UInt32 {
        Self.bits(Builtin.cmp_eq_Vec16xInt8(lanes._storage._value, SIMD16<UInt8>(repeating: byte)._storage._value))
    }

    /// Bits of the bytes below `byte`.
    @inlinable @inline(__always)
    func below(_ byte: UInt8) -> UInt32 {
        Self.bits(Builtin.cmp_ult_Vec16xInt8(lanes._storage._value, SIMD16<UInt8>(repeating: byte)._storage._value))
    }

    /// Bits of the bytes that are not ASCII (their high bit).
    @inlinable @inline(__always)
    var nonASCII: UInt32 {
        Self.bits(Builtin.cmp_slt_Vec16xInt8(lanes._storage._value, SIMD16<UInt8>(repeating: 0)._storage._value))
    }

    /// Bits of the bytes that end a string's plain run: a quote, a backslash, a control
    /// character or non-ASCII.
    @inlinable @inline(__always)
    var attention: UInt32 {
        let quote = Builtin.cmp_eq_Vec16xInt8(lanes._storage._value, SIMD16<UInt8>(repeating: 0x22)._storage._value)
        let backslash = Builtin.cmp_eq_Vec16xInt8(lanes._storage._value, SIMD16<UInt8>(repeating: 0x5C)._storage._value)
        // As signed bytes, control characters (0x00-0x1F) and non-ASCII (0x80-0xFF, negative)
        // are exactly those below 0x20.
        let low = Builtin.cmp_slt_Vec16xInt8(lanes._storage._value, SIMD16<UInt8>(repeating: 0x20)._storage._value)
        return Self.bits(Builtin.or_Vec16xInt1(Builtin.or_Vec16xInt1(quote, backslash), low))
    }

    @inlinable @inline(__always)
    static func bits(_ mask: Builtin.Vec16xInt1) -> UInt32 { UInt32(UInt16(Builtin.bitcast_Vec16xInt1_Int16(mask))) }
}
