/// Why a text is not RFC 8259 JSON, and where (a byte offset).
public struct JSONError: Error, Equatable, CustomStringConvertible {
    /// What was wrong with the text.
    public enum Reason: Equatable, Sendable {
        case unexpectedEnd
        case unexpectedByte(UInt8, expected: String)
        case invalidUTF8
        case controlCharacterInString
        case invalidEscape
        case invalidNumber
        case tooDeep(limit: Int)
        case trailingContent
    }

    /// What was wrong.
    public var reason: Reason
    /// The byte offset where reading stopped.
    public var offset: Int

    /// An error for `reason` at byte `offset`.
    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// The reason and the byte offset, in words.
    public var description: String {
        switch reason {
        case .unexpectedEnd: "the text ends too early (at byte \(offset))"
        case .unexpectedByte(let byte, let expected): "expected \(expected) at byte \(offset), found \(JSONError.show(byte))"
        case .invalidUTF8: "invalid UTF-8 at byte \(offset)"
        case .controlCharacterInString: "unescaped control character in a string at byte \(offset)"
        case .invalidEscape: "invalid escape sequence at byte \(offset)"
        case .invalidNumber: "invalid number at byte \(offset)"
        case .tooDeep(let limit): "nesting deeper than \(limit) levels at byte \(offset)"
        case .trailingContent: "unexpected content after the JSON value at byte \(offset)"
        }
    }

    static func show(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }
}
