import ByteJSON
import PropertyBased
import Testing

func hash(_ text: String) throws -> UInt64 {
    try Array(text.utf8).withUnsafeBufferPointer { bytes throws(JSONError) in
        var scanner = JSONScanner(bytes)
        return try scanner.scanDocument().hash
    }
}

/// Whether an object anywhere in `text` (valid JSON) holds a name twice, escapes resolved.
func repeatsAName(_ text: String) -> Bool {
    Array(text.utf8).withUnsafeBufferPointer { bytes in
        var scanner = JSONScanner(bytes)
        func walk() throws -> Bool {
            var repeated = false
            switch scanner.peek() {
            case UInt8(ascii: "{"):
                var names = Set<[UInt8]>()
                var key = try scanner.beginObject()
                while let current = key {
                    if !names.insert(scanner.decoded(current)).inserted { repeated = true }
                    if try walk() { repeated = true }
                    key = try scanner.nextKey()
                }
            case UInt8(ascii: "["):
                var more = try scanner.beginArray()
                while more {
                    if try walk() { repeated = true }
                    more = try scanner.nextElement()
                }
            default:
                _ = try scanner.scanValue()
            }
            return repeated
        }
        return (try? walk()) ?? false
    }
}

@Suite struct ScannerTests {
    /// `repeatsAName` itself, on the case that made `aGeneratedValueHashesAsItsTreeSays` flaky.
    @Test func aRepeatedNameIsSeenWhereverItStands() throws {
        #expect(repeatsAName(#"{"a":1,"a":2}"#))
        #expect(repeatsAName(#"[1,{"b":{"a":1,"\u0061":2}}]"#))
        #expect(!repeatsAName(#"{"a":{"a":1},"b":[{"a":2},{"a":3}]}"#))
        // Such texts build equal trees and hash apart, as designed.
        #expect(try JSONValue(parsing: #"{"a":1,"a":2}"#) == JSONValue(parsing: #"{"a":2}"#))
        #expect(try hash(#"{"a":1,"a":2}"#) != hash(#"{"a":2}"#))
    }

    @Test(arguments: [
        ("{\"a\":1,\"b\":[true,null]}", "{ \"b\" : [ true , null ] , \"a\" : 1.0 }"),
        ("1", "1.0"), ("1", "1e0"), ("100", "1e2"), ("0.001", "1E-3"), ("-0", "0"), ("0.0e5", "0"), ("123.4500", "1.2345e2"),
        ("\"é\"", "\"\\u00e9\""), ("\"a/b\"", "\"a\\/b\""), ("\"😀\"", "\"\\ud83d\\ude00\""), ("\"abcdefghijklmnopq\"", "\"abcdefgh\\u0069jklmnopq\""),
    ])
    func equalValuesHashEqually(_ a: String, _ b: String) throws {
        #expect(try hash(a) == hash(b))
        #expect(try JSONValue(parsing: a) == JSONValue(parsing: b))
    }

    /// Strings are read 16 bytes at a time, then byte by byte near the text's end: at every length
    /// around those steps, a string hashes the same plain as with any one letter escaped, and
    /// differs from the same string with any one letter changed, wherever the string ends.
    @Test func stringsHashByMeaningAtEveryLengthAndPlace() throws {
        for length in 0...40 {
            let letters = (0..<length).map { UInt8(0x61 + $0 % 26) }
            // Alone (the text ends right after it) and with bytes after it (room for whole words).
            for trailer in ["", "                "] {
                let plain = try hash("\"" + String(decoding: letters, as: UTF8.self) + "\"" + trailer)
                for place in 0..<length {
                    var escaped = letters.map { String(UnicodeScalar($0)) }
                    escaped[place] = "\\u00" + String(letters[place], radix: 16)
                    #expect(try hash("\"" + escaped.joined() + "\"" + trailer) == plain, "length \(length), escape at \(place)")
                    var changed = letters
                    changed[place] ^= 0x20
                    #expect(
                        try hash("\"" + String(decoding: changed, as: UTF8.self) + "\"" + trailer) != plain, "length \(length), change at \(place)")
                }
            }
        }
    }

    @Test(arguments: [
        ("1", "\"1\""), ("1", "2"), ("1", "-1"), ("10", "1"), ("0.1", "1"), ("[1,2]", "[2,1]"), ("{\"a\":1}", "{\"a\":2}"),
        ("{\"a\":1}", "{\"b\":1}"), ("[]", "{}"), ("null", "false"), ("\"é\"", "\"e\u{301}\""), ("[[1],2]", "[1,[2]]"),
        ("{\"a\":{\"b\":1}}", "{\"a\":{\"b\":1},\"c\":1}"),
    ])
    func differentValuesDiffer(_ a: String, _ b: String) throws {
        #expect(try hash(a) != hash(b))
        #expect(try JSONValue(parsing: a) != JSONValue(parsing: b))
    }

    @Test func aGeneratedValueHashesAsItsTreeSays() async throws {
        await propertyCheck(count: 300, input: Gen.int(in: 0...1_000).array(of: 1...40), Gen.int(in: 0...1_000).array(of: 1...40)) { a, b in
            var first = TapeWriter(tape: a), second = TapeWriter(tape: b)
            let textA = first.value(depth: 0), textB = second.value(depth: 0)
            // A tree keeps the last of repeated names, while the hash counts every member, so
            // texts that repeat a name may build equal trees and hash apart.
            if try JSONValue(parsing: textA) == JSONValue(parsing: textB), !repeatsAName(textA), !repeatsAName(textB) {
                #expect(try hash(textA) == hash(textB))
            }
        }
    }

    /// A scanned string says a name exactly when their bytes agree, whatever the name's length
    /// (up to 16 bytes compared as words, longer ones by memcmp), with or without hashes (without,
    /// nothing short-cuts the comparison), far from the end of the text or right at it.
    @Test func aStringSaysANameExactlyWhenTheBytesAgree() async {
        let letters = Gen.int(in: 0x61...0x7A).array(of: 1...20).map { String(decoding: $0.map(UInt8.init), as: UTF8.self) }
        await propertyCheck(count: 1_000, input: letters, Gen.int(in: 0...40), Gen.int(in: 0...2)) { name, change, kind in
            var other = Array(name.utf8)
            switch kind {
            case 0: other[change % other.count] ^= 0x01
            case 1: other.removeLast()
            default: break
            }
            let same = other == Array(name.utf8)
            for text in ["\"\(String(decoding: other, as: UTF8.self))\"", "\"\(String(decoding: other, as: UTF8.self))\" : [1, 2, 3, 4, 5, 6, 7, 8]"]
            {
                for hashing in [true, false] {
                    Array(text.utf8).withUnsafeBufferPointer { buffer in
                        var scanner = JSONScanner(buffer)
                        scanner.hashing = hashing
                        guard let string = try? scanner.scanString() else {
                            Issue.record("\(text) did not scan")
                            return
                        }
                        #expect(scanner.string(string, is: JSONName(name)) == same, "\(name) against \(text), hashing \(hashing)")
                    }
                }
            }
        }
    }

    @Test func errorsSayWhere() throws {
        let error = try #require(throws: JSONError.self) { try JSONValue(parsing: "[1, 2,, 3]") }
        #expect(error.offset == 6)
        #expect(error.description == "expected a value at byte 6, found ','")
        let deep = try #require(throws: JSONError.self) { try JSONValue(parsing: String(repeating: "[", count: 100_000)) }
        #expect(deep.reason == .tooDeep(limit: 512))
    }

    @Test func aMillionOpenBracketsNeitherCrashesNorRecurses() {
        let text = Array(repeating: UInt8(ascii: "{"), count: 1) + Array(repeating: UInt8(ascii: "["), count: 1_000_000)
        #expect(throws: JSONError.self) { try text.withUnsafeBufferPointer { try JSONScanner.validate($0, maxDepth: 2_000_000) } }
    }

    @Test func membersAndElementsCanBeWalkedOneLevelAtATime() throws {
        let text = Array("{\"k\\u0065y\": [1, \"x\"], \"other\": {}}".utf8)
        try text.withUnsafeBufferPointer { bytes in
            var scanner = JSONScanner(bytes)
            let key = try #require(try scanner.beginObject())
            #expect(scanner.string(key, equals: Array("key".utf8)))
            #expect(try scanner.beginArray())
            #expect(try scanner.scanValue().kind == .number)
            #expect(try scanner.nextElement())
            #expect(try scanner.scanValue().kind == .string)
            #expect(try !scanner.nextElement())
            let second = try #require(try scanner.nextKey())
            #expect(scanner.decoded(second) == Array("other".utf8))
            #expect(try scanner.scanValue().kind == .object)
            #expect(try scanner.nextKey() == nil)
        }
    }

    @Test func theWriterEscapesWhatRFC8259Requires() throws {
        var writer = JSONWriter()
        writer.raw("[")
        writer.string("a\"b\\c\n\u{1}é")
        writer.raw(",")
        writer.int(-9_223_372_036_854_775_807 - 1)
        writer.raw(",")
        writer.int(0)
        writer.raw("]")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[\"a\\\"b\\\\c\\n\\u0001é\",-9223372036854775808,0]")
        #expect(
            try JSONValue(parsing: String(decoding: writer.bytes, as: UTF8.self))
                == .array([
                    .string(Array("a\"b\\c\n\u{1}é".utf8)),
                    .number(CanonicalNumber(negative: true, digits: Array("9223372036854775808".utf8), exponent: 19)),
                    .number(CanonicalNumber(negative: false, digits: [], exponent: 0)),
                ]))
    }
}

@Suite struct ExactIntegerTests {
    func integer(_ text: String) -> Int64? {
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            var scanner = JSONScanner(bytes)
            guard let value = try? scanner.scanDocument() else { return nil }
            return scanner.exactInteger(value.start..<value.end)
        }
    }

    @Test func wholeNumbersAreTheSameWhateverTheSpelling() {
        for text in ["5", "5.0", "50e-1", "0.5e1", "5.000e0"] { #expect(integer(text) == 5, "\(text)") }
        #expect(integer("0") == 0 && integer("-0.0") == 0 && integer("1e18") == 1_000_000_000_000_000_000)
        #expect(integer("9223372036854775807") == Int64.max && integer("-9223372036854775808") == Int64.min)
    }

    @Test func othersAreNot() {
        for text in ["1.5", "9223372036854775808", "-9223372036854775809", "1e19", "1e-1", "123456789012345678901234567890"] {
            #expect(integer(text) == nil, "\(text)")
        }
    }
}
