import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes one line per log event to standard output, as text or as a JSON object.
struct LineLogHandler: LogHandler {
    enum Format: String, CaseIterable, Sendable {
        case text, json
    }

    let label: String
    let format: Format
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = metadata
        for (key, value) in event.metadata ?? [:] { fields[key] = value }
        let keys = fields.keys.sorted()
        var line: String
        switch format {
        case .text:
            // Values come from requests and tokens (a path, a token's `alg` or `kid`): each is
            // written bare only where it holds nothing that could end the line or the field, so
            // one event is always one line, and `key=value` pairs read back as they were.
            line = "\(Self.timestamp()) \(event.level) \(Self.textValue("\(event.message)", bareSpaces: true))"
            for key in keys { line += " \(Self.textValue(key))=\(Self.textValue("\(fields[key]!)"))" }
        case .json:
            line = "{\"time\":\"\(Self.timestamp())\",\"level\":\"\(event.level)\",\"message\":\(Self.quoted("\(event.message)"))"
            for key in keys { line += ",\(Self.quoted(key)):\(Self.json(fields[key]!))" }
            line += "}"
        }
        line += "\n"
        // One write per line: lines from different threads never interleave.
        _ = line.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
    }

    /// UTC, millisecond precision, ISO 8601.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = now.tv_nsec / 1_000_000
        let millisText = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(millisText)Z"
    }

    /// A metadata value as JSON: numbers and booleans given as such (`.stringConvertible`) stay
    /// numbers and booleans, so that a log pipeline graphs `duration_ms` without a parser rule;
    /// everything else is a string, or a list or object of them.
    static func json(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): return quoted(text)
        case .stringConvertible(let convertible):
            switch convertible {
            case let flag as Bool: return flag ? "true" : "false"
            case let number as any BinaryInteger: return "\(number)"
            case let number as Double where number.isFinite: return "\(number)"
            case let number as Float where number.isFinite: return "\(number)"
            default: return quoted(convertible.description)
            }
        case .array(let values): return "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let members):
            return "{" + members.keys.sorted().map { "\(quoted($0)):\(json(members[$0]!))" }.joined(separator: ",") + "}"
        }
    }

    /// `text` as it is where it holds only printable characters (and spaces where
    /// `bareSpaces`), none of `"`, `=` and `\`; else quoted as a JSON string, every control
    /// character and line separator escaped.
    static func textValue(_ text: String, bareSpaces: Bool = false) -> String {
        let bare =
            !text.isEmpty
            && text.unicodeScalars.allSatisfy { scalar in
                !needsEscape(scalar) && scalar != "\"" && scalar != "=" && scalar != "\\" && (bareSpaces || scalar != " ")
            }
        return bare ? text : quoted(text)
    }

    /// Control characters (C0, DEL, C1) and the Unicode line and paragraph separators, which
    /// some log readers take for the end of a line.
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where needsEscape(scalar):
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
