/// Percent-decoding (RFC 3986 §2.1), for a request target's parts.
package enum PercentDecoding {
    /// `text` with each `%XX` replaced by its byte; nil where a `%` is not followed by two hex
    /// digits, or the bytes are not UTF-8.
    package static func decode<Text: StringProtocol>(_ text: Text) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            index = utf8.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard index != utf8.endIndex, let high = hexValue(utf8[index]) else { return nil }
            index = utf8.index(after: index)
            guard index != utf8.endIndex, let low = hexValue(utf8[index]) else { return nil }
            index = utf8.index(after: index)
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Whether `text` holds a control character (C0 or DEL), which no path or parameter of an
    /// HTTP API needs, and which logs and C strings take for something else.
    package static func hasControlCharacter<Text: StringProtocol>(_ text: Text) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
