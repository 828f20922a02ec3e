import ByteJSON
import Foundation
import PropertyBased
import Testing

/// A value in a form both readers can be turned into, for comparing what they saw.
indirect enum Plain: Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string([Unicode.Scalar])
    case array([Plain])
    case object([[Unicode.Scalar]: Plain])

    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let bool): self = .bool(bool)
        case .number(let number): self = .number(Double(String(decoding: number.bytes, as: UTF8.self))!)
        case .string(let bytes): self = .string(Array(String(decoding: bytes, as: UTF8.self).unicodeScalars))
        case .array(let elements): self = .array(elements.map(Plain.init))
        case .object(let members):
            self = .object(
                Dictionary(uniqueKeysWithValues: members.map { (Array(String(decoding: $0.key, as: UTF8.self).unicodeScalars), Plain($0.value)) }))
        }
    }

    init(foundation value: Any) {
        switch value {
        case is NSNull: self = .null
        case let number as NSNumber where String(describing: type(of: number)) == "__NSCFBoolean": self = .bool(number.boolValue)
        case let number as NSNumber: self = .number(number.doubleValue)
        case let string as String: self = .string(Array(string.unicodeScalars))
        case let array as [Any]: self = .array(array.map(Plain.init(foundation:)))
        case let object as [String: Any]:
            self = .object(Dictionary(uniqueKeysWithValues: object.map { (Array($0.key.unicodeScalars), Plain(foundation: $0.value)) }))
        default: fatalError("unexpected \(type(of: value))")
        }
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): "\(b)"
        case .number(let d): "\(d)"
        case .string(let s): "\"\(String(String.UnicodeScalarView(s)))\""
        case .array(let a): "\(a)"
        case .object(let o): "\(o.map { (String(String.UnicodeScalarView($0.key)), $0.value) })"
        }
    }
}

/// Writes a JSON text from a tape of small numbers, varying spelling as much as content:
/// whitespace, escapes, number notation, key order and repeated keys.
struct TapeWriter {
    var tape: [Int]
    var index = 0

    mutating func next(_ bound: Int) -> Int {
        defer { index += 1 }
        return tape.isEmpty ? 0 : tape[index % tape.count] % bound
    }

    mutating func space() -> String { ["", " ", "\n", "\t ", "\r\n"][next(5)] }

    mutating func value(depth: Int) -> String {
        let choice = depth > 4 || index > tape.count * 2 ? next(5) : next(7)
        switch choice {
        case 0: return "null"
        case 1: return next(2) == 0 ? "true" : "false"
        case 2: return number()
        case 3, 4: return string()
        case 5:
            let count = next(4)
            return "[" + (0..<count).map { _ in space() + value(depth: depth + 1) + space() }.joined(separator: ",") + "]"
        default:
            let count = next(4)
            return "{"
                + (0..<count).map { _ in space() + string() + space() + ":" + space() + value(depth: depth + 1) }
                .joined(separator: ",") + space() + "}"
        }
    }

    mutating func number() -> String {
        let sign = next(3) == 0 ? "-" : ""
        let integer = next(4) == 0 ? "0" : String(next(100_000) + 1)
        let fraction = next(3) == 0 ? "." + String(next(1000)) : ""
        let exponent = next(4) == 0 ? ["e", "E", "e+", "e-"][next(4)] + String(next(20)) : ""
        return sign + integer + fraction + exponent
    }

    mutating func string() -> String {
        let palette = [
            "a", "b", "id", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\u00e9", "é", "e\u{301}", "😀", "\\ud83d\\ude00", "\\u0000", "\u{7F}", " ",
        ]
        return "\"" + (0..<next(5)).map { _ in palette[next(palette.count)] }.joined() + "\""
    }
}

/// Whether an object somewhere holds two member names that differ in code points but are equal
/// as Swift strings ("é" and "e\u{301}"): different names to RFC 8259, one to Foundation.
func hasCanonicallyEquivalentNames(_ value: JSONValue) -> Bool {
    switch value {
    case .object(let members):
        Set(members.keys.map { String(decoding: $0, as: UTF8.self) }).count < members.count
            || members.values.contains(where: hasCanonicallyEquivalentNames)
    case .array(let elements): elements.contains(where: hasCanonicallyEquivalentNames)
    default: false
    }
}

@Suite struct DifferentialTests {
    @Test func generatedDocumentsReadTheSameAsFoundation() async throws {
        await propertyCheck(count: 500, input: Gen.int(in: 0...1_000).array(of: 1...60)) { tape in
            var writer = TapeWriter(tape: tape)
            let text = writer.space() + writer.value(depth: 0) + writer.space()
            let ours = try JSONValue(parsing: text)
            // Foundation merges such names; see whereFoundationStraysTheRFCDecides.
            guard !hasCanonicallyEquivalentNames(ours) else { return }
            let theirs = try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)
            #expect(Plain(ours) == Plain(foundation: theirs), "\(text)")
        }
    }

    /// Texts both readers accept, and texts both refuse.
    @Test(arguments: [
        "0", "-0", "1E+2", "0.5e-3", "[]", "{}", "\"\"", "\"\\u0000\"", "\"\\ud83d\\ude00\"", " [ 1 , { \"a\" : null } ] ",
        "{\"a\":1,\"a\":2}", "\"\u{7F}\"", "1234.5678e-30", String(repeating: "[", count: 512) + String(repeating: "]", count: 512),
    ])
    func bothAccept(_ text: String) throws {
        let ours = try JSONValue(parsing: text)
        let theirs = try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)
        #expect(Plain(ours) == Plain(foundation: theirs))
    }

    @Test(arguments: [
        "", " ", "01", "1.", ".1", "+1", "1e", "-", "[", "{", "\"abc", "\"\\x\"", "\"\t\"", "nul", "tru",
        "[1 2]", "{1:2}", "{\"a\" 1}", "\"\\u12\"", "NaN", "Infinity", "[1]x", "{\"a\":1}}", "'a'",
        String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
    ])
    func bothRefuse(_ text: String) {
        #expect(throws: JSONError.self) { try JSONValue(parsing: text) }
        #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed) }
    }

    @Test(
        arguments: [
            [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22],
            [0x22, 0x80, 0x22],
        ] as [[UInt8]])
    func bothRefuseInvalidUTF8(_ bytes: [UInt8]) throws {
        let error = try #require(throws: JSONError.self) { try bytes.withUnsafeBufferPointer { try JSONScanner.validate($0) } }
        #expect(error.reason == .invalidUTF8)
        #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) }
    }

    /// Where Foundation strays from RFC 8259, the RFC decides.
    @Test func whereFoundationStraysTheRFCDecides() throws {
        // A lone surrogate escape fits the RFC's grammar (section 7; section 8.2 only warns);
        // Foundation refuses it.
        #expect(try JSONValue(parsing: "\"\\ud800\"") == .string([0xED, 0xA0, 0x80]))
        #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: Data("\"\\ud800\"".utf8), options: .fragmentsAllowed) }
        // Numbers beyond Double's range are JSON numbers all the same (section 6).
        #expect(try JSONValue(parsing: "1e400") == .number(CanonicalNumber(negative: false, digits: [0x31], exponent: 401)))
        #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: Data("1e400".utf8), options: .fragmentsAllowed) }
        // A byte order mark is not part of a JSON text (section 8.1: parsers MAY ignore it);
        // Foundation skips it, we follow the grammar and refuse it.
        #expect(throws: JSONError.self) { try JSONValue(parsing: "\u{FEFF}[1]") }
        // "é" and "e\u0301" are different member names (different code points); Foundation's
        // dictionary keeps one of them.
        let names = #"{"\u00e9": 1, "e\u0301": 2}"#
        guard case .object(let members) = try JSONValue(parsing: names) else { Issue.record("not an object"); return }
        #expect(members.count == 2)
        #expect((try JSONSerialization.jsonObject(with: Data(names.utf8)) as? [String: Any])?.count == 1)
        // Trailing commas are not in the grammar; Foundation accepts them.
        #expect(throws: JSONError.self) { try JSONValue(parsing: "[1,]") }
        #expect(throws: JSONError.self) { try JSONValue(parsing: "{\"a\":1,}") }
        #expect((try JSONSerialization.jsonObject(with: Data("[1,]".utf8)) as? [Any])?.count == 1)
        #expect((try JSONSerialization.jsonObject(with: Data("{\"a\":1,}".utf8)) as? [String: Any])?.count == 1)
        // Long mantissas: we keep every digit; Foundation's Double is one unit in the last
        // place away from the correctly rounded value that strtod gives.
        let long = "123456789.123456789e-30"
        #expect(Plain(try JSONValue(parsing: long)) == .number(Double(long)!))
        let foundation = try JSONSerialization.jsonObject(with: Data(long.utf8), options: .fragmentsAllowed) as! NSNumber
        #expect(foundation.doubleValue != Double(long)!)
    }
}
