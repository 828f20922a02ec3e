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
            line = "\(Self.timestamp()) \(event.level) \(event.message)"
            for key in keys { line += " \(key)=\(fields[key]!)" }
        case .json:
            line = "{\"time\":\"\(Self.timestamp())\",\"level\":\"\(event.level)\",\"message\":\(Self.quoted("\(event.message)"))"
            for key in keys { line += ",\(Self.quoted(key)):\(Self.quoted("\(fields[key]!)"))" }
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

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += "\\u00" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
