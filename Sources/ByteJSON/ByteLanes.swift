import Builtin

/// Sixteen bytes of text classified at once, with the processor's own vector compares and
/// movemask (SSE2's `pcmpeqb` and `pmovmskb` on x86-64, the like elsewhere): a bit a byte.
///
/// The standard library's `SIMD16` compares lower to vector compares, but it has no way to
/// turn a lane mask into bits, and gathering them lane by lane or by multiplication costs
/// several times more than the compares (`make bench-blocks`; figures in docs/performance.md,
/// part blocks). `Builtin` (the experimental `BuiltinModule` feature, available in release
/// toolchains) has the bitcast from 16 one-bit lanes to a 16-bit integer, which LLVM lowers
/// to one movemask; it is used here and nowhere else.
struct ByteLanes {
    let lanes: Builtin.Vec16xInt8

    @inline(__always)
    init(_ pointer: UnsafeRawPointer) { lanes = pointer.loadUnaligned(as: SIMD16<UInt8>.self)._storage._value }

    /// Bits of the bytes that end a string's plain run: a quote, a backslash, a control
    /// character or non-ASCII.
    @inline(__always)
    var attention: UInt32 {
        let quote = Builtin.cmp_eq_Vec16xInt8(lanes, Self.splat(0x22))
        let backslash = Builtin.cmp_eq_Vec16xInt8(lanes, Self.splat(0x5C))
        // As signed bytes, control characters (0x00-0x1F) and non-ASCII (0x80-0xFF, negative)
        // are exactly those below 0x20.
        let low = Builtin.cmp_slt_Vec16xInt8(lanes, Self.splat(0x20))
        return UInt32(UInt16(Builtin.bitcast_Vec16xInt1_Int16(Builtin.or_Vec16xInt1(Builtin.or_Vec16xInt1(quote, backslash), low))))
    }

    @inline(__always)
    private static func splat(_ byte: UInt8) -> Builtin.Vec16xInt8 { SIMD16<UInt8>(repeating: byte)._storage._value }
}
