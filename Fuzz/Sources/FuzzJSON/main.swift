import CLibFuzzer
import Glibc

@testable import ByteJSON

/// Any bytes: the scanner either accepts them or says where they stop being JSON, never
/// crashes, and `JSONValidator` judges them the same; accepted text builds the same tree
/// twice, hashes by meaning, and a tree's number descriptions read back as the same values;
/// numbers read inline read as `scanNumber` reads them.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    checkNumbers(bytes)
    var scanner = JSONScanner(bytes, maxDepth: 64)
    let scanned: ScannedValue
    let accepted = JSONValidator.accepts(bytes, maxDepth: 64)
    do { scanned = try scanner.scanDocument() } catch {
        if accepted { fatalError("the validator accepts what the scanner refuses: \(error)") }
        return 0
    }
    if !accepted { fatalError("the validator refuses what the scanner accepts") }
    guard let tree = try? JSONValue(parsing: bytes, maxDepth: 64) else { fatalError("scanned but did not build") }
    var again = JSONScanner(bytes, maxDepth: 64)
    guard (try? again.scanDocument())?.hash == scanned.hash else { fatalError("the hash is not stable") }
    check(tree)
    return 0
}

/// Wherever a number may start, the value loop's inline reading (`scanPlainNumber`) gives what
/// `scanNumber` gives, or leaves it to `scanNumber` with the cursor unmoved.
func checkNumbers(_ bytes: UnsafeBufferPointer<UInt8>) {
    for start in bytes.indices where bytes[start] == 0x2D || bytes[start] &- 0x30 < 10 {
        if start > 0 && (bytes[start - 1] &- 0x30 < 10 || bytes[start - 1] == 0x2D) { continue }
        for hashing in [true, false] {
            var plain = JSONScanner(bytes)
            plain.hashing = hashing
            plain.position = start
            guard let quick = plain.scanPlainNumber() else {
                if plain.position != start { fatalError("scanPlainNumber moved the cursor without an answer at \(start)") }
                continue
            }
            var full = JSONScanner(bytes)
            full.hashing = hashing
            full.position = start
            guard let slow = try? full.scanNumber(), slow == quick, full.position == plain.position else {
                fatalError("scanPlainNumber and scanNumber differ at \(start)")
            }
        }
    }
}

/// Numbers describe themselves as text that reads back as the same value.
func check(_ value: JSONValue) {
    switch value {
    case .number(let number):
        let text = Array(number.description.utf8)
        guard case .number(let back)? = text.withUnsafeBufferPointer({ try? JSONValue(parsing: $0) }), back == number else {
            fatalError("\(number.description) does not read back as the same number")
        }
    case .array(let elements): elements.forEach(check)
    case .object(let members): members.values.forEach(check)
    default: break
    }
}

exit(cfuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzz($0, $1) })
