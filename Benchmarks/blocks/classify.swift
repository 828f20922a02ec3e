// Stage one of a two-stage JSON reader, alone: each 64-byte block of the 100,000-movie body
// classified into six bitmasks (quote, backslash, structural, whitespace, control, non-ASCII),
// in pure Swift, three ways:
// - `Builtin`'s vector compares and the bitcast of 16 one-bit lanes to 16 bits, which LLVM
//   lowers to the processor's compare and movemask (as ByteJSON's `ByteLanes` does; the
//   experimental BuiltinModule feature);
// - `.==` on SIMD16<UInt8>, the natural spelling, each mask's lanes then read one by one;
// - lane arithmetic: a lane is zero where (x - 1) & ~x has its high bit, which does compile
//   to vector instructions; each mask's 16 high bits are then gathered by multiplication.
// The standard library has no movemask, which the last two stand in for.
// Prints MB/s and a checksum of the masks (equal to classify.c's, which does the same with SSE2).
import Builtin
import Foundation

typealias Lanes = SIMD16<UInt8>

struct Masks {
    var quote: UInt64 = 0, backslash: UInt64 = 0, structural: UInt64 = 0
    var whitespace: UInt64 = 0, control: UInt64 = 0, nonASCII: UInt64 = 0
    var checksum: UInt64 { quote &+ backslash &* 3 &+ structural &* 5 &+ whitespace &* 7 &+ control &* 11 &+ nonASCII &* 13 }
}

/// The high bit of each lane, 16 lanes to 16 bits.
@inline(__always)
func gather(_ lanes: Lanes) -> UInt64 {
    let words = unsafeBitCast(lanes, to: SIMD2<UInt64>.self)
    let spread: UInt64 = 0x0002_0408_1020_4081
    let low = ((words[0] & 0x8080_8080_8080_8080) &* spread) >> 56
    let high = ((words[1] & 0x8080_8080_8080_8080) &* spread) >> 56
    return low | high << 8
}

@inline(__always) func isZero(_ x: Lanes) -> Lanes { (x &- Lanes(repeating: 1)) & ~x }
@inline(__always) func equal(_ x: Lanes, _ byte: UInt8) -> Lanes { isZero(x ^ Lanes(repeating: byte)) }

@inline(never)
func classifyByArithmetic(_ block: UnsafePointer<UInt8>) -> Masks {
    var masks = Masks()
    for part in 0..<4 {
        let x = UnsafeRawPointer(block + 16 * part).loadUnaligned(as: Lanes.self)
        let shift = UInt64(16 * part)
        masks.quote |= gather(equal(x, 0x22)) << shift
        masks.backslash |= gather(equal(x, 0x5C)) << shift
        let structural = equal(x, 0x7B) | equal(x, 0x7D) | equal(x, 0x5B) | equal(x, 0x5D) | equal(x, 0x3A) | equal(x, 0x2C)
        masks.structural |= gather(structural) << shift
        masks.whitespace |= gather(equal(x, 0x20) | equal(x, 0x0A) | equal(x, 0x0D) | equal(x, 0x09)) << shift
        masks.control |= gather(isZero(x & Lanes(repeating: 0xE0))) << shift
        masks.nonASCII |= gather(x) << shift
    }
    return masks
}

@inline(__always)
func bits(_ mask: SIMDMask<SIMD16<Int8>>) -> UInt64 {
    var result: UInt64 = 0
    for lane in 0..<16 where mask[lane] { result |= 1 << UInt64(lane) }
    return result
}

@inline(never)
func classifyByComparison(_ block: UnsafePointer<UInt8>) -> Masks {
    var masks = Masks()
    for part in 0..<4 {
        let x = UnsafeRawPointer(block + 16 * part).loadUnaligned(as: Lanes.self)
        let shift = UInt64(16 * part)
        func equal(_ byte: UInt8) -> SIMDMask<SIMD16<Int8>> { x .== Lanes(repeating: byte) }
        masks.quote |= bits(equal(0x22)) << shift
        masks.backslash |= bits(equal(0x5C)) << shift
        masks.structural |= bits(equal(0x7B) .| equal(0x7D) .| equal(0x5B) .| equal(0x5D) .| equal(0x3A) .| equal(0x2C)) << shift
        masks.whitespace |= bits(equal(0x20) .| equal(0x0A) .| equal(0x0D) .| equal(0x09)) << shift
        masks.control |= bits(x .< Lanes(repeating: 0x20)) << shift
        masks.nonASCII |= bits(x .>= Lanes(repeating: 0x80)) << shift
    }
    return masks
}

@inline(__always)
func movemask(_ mask: Builtin.Vec16xInt1) -> UInt64 { UInt64(UInt16(Builtin.bitcast_Vec16xInt1_Int16(mask))) }
@inline(__always)
func equalLanes(_ x: Lanes, _ byte: UInt8) -> Builtin.Vec16xInt1 {
    Builtin.cmp_eq_Vec16xInt8(x._storage._value, Lanes(repeating: byte)._storage._value)
}
@inline(__always)
func either(_ a: Builtin.Vec16xInt1, _ b: Builtin.Vec16xInt1) -> Builtin.Vec16xInt1 { Builtin.or_Vec16xInt1(a, b) }

@inline(never)
func classifyByBuiltin(_ block: UnsafePointer<UInt8>) -> Masks {
    var masks = Masks()
    for part in 0..<4 {
        let x = UnsafeRawPointer(block + 16 * part).loadUnaligned(as: Lanes.self)
        let shift = UInt64(16 * part)
        func equal(_ byte: UInt8) -> Builtin.Vec16xInt1 { equalLanes(x, byte) }
        masks.quote |= movemask(equal(0x22)) << shift
        masks.backslash |= movemask(equal(0x5C)) << shift
        masks.structural |=
            movemask(either(either(either(equal(0x7B), equal(0x7D)), either(equal(0x5B), equal(0x5D))), either(equal(0x3A), equal(0x2C)))) << shift
        masks.whitespace |= movemask(either(either(equal(0x20), equal(0x0A)), either(equal(0x0D), equal(0x09)))) << shift
        masks.control |= movemask(Builtin.cmp_ult_Vec16xInt8(x._storage._value, Lanes(repeating: 0x20)._storage._value)) << shift
        masks.nonASCII |= movemask(Builtin.cmp_slt_Vec16xInt8(x._storage._value, Lanes(repeating: 0)._storage._value)) << shift
    }
    return masks
}

let path = CommandLine.arguments[1]
var text = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
let length = text.count - text.count % 64
let megabytes = Double(length) / 1_048_576

func run(_ name: String, rounds: Int, _ classify: (UnsafePointer<UInt8>) -> Masks) {
    var times = [Double]()
    var checksum: UInt64 = 0
    text.withUnsafeBufferPointer { bytes in
        for _ in 0..<rounds {
            checksum = 0
            let start = ContinuousClock.now
            var offset = 0
            while offset < length {
                checksum = checksum &* 31 &+ classify(bytes.baseAddress! + offset).checksum
                offset += 64
            }
            let elapsed = ContinuousClock.now - start
            times.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
    }
    times.sort()
    print(String(format: "Swift, %@: median %.0f MB/s (checksum %016llx)", name, megabytes / times[times.count / 2], checksum))
}

run("Builtin compares and movemask", rounds: 15, classifyByBuiltin)
run("lane arithmetic", rounds: 15, classifyByArithmetic)
run("`.==` comparisons", rounds: 3, classifyByComparison)
