import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Defaults for flags from `LIVEDELTA_*` environment variables, so a container can be
/// configured without a command line. A flag given on the command line wins. A variable whose
/// value does not read as its flag's type is remembered, and start-up stops on it
/// (`Serve.validate`), rather than running silently on the default.
enum Environment {
    private static let unreadable = Mutex<[String]>([])

    /// The variables set to values that could not be read, as `NAME="value"`.
    static var invalid: [String] { unreadable.withLock { $0 } }

    static func string(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// A repeatable flag's values, comma-separated.
    static func list(_ name: String) -> [String] {
        string(name).map { $0.split(separator: ",").map(String.init) } ?? []
    }

    static func value<T: LosslessStringConvertible>(_ name: String, default fallback: T) -> T {
        read(name, T.init) ?? fallback
    }

    static func choice<T: RawRepresentable>(_ name: String, default fallback: T) -> T where T.RawValue == String {
        read(name, T.init(rawValue:)) ?? fallback
    }

    private static func read<T>(_ name: String, _ parse: (String) -> T?) -> T? {
        guard let text = string(name) else { return nil }
        guard let value = parse(text) else {
            unreadable.withLock { $0.append("\(name)=\"\(text)\"") }
            return nil
        }
        return value
    }
}
