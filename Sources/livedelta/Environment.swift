#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Defaults for flags from `LIVEDELTA_*` environment variables, so a container can be
/// configured without a command line. A flag given on the command line wins.
enum Environment {
    static func string(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    static func value<T: LosslessStringConvertible>(_ name: String, default fallback: T) -> T {
        string(name).flatMap(T.init) ?? fallback
    }

    static func choice<T: RawRepresentable>(_ name: String, default fallback: T) -> T where T.RawValue == String {
        string(name).flatMap(T.init(rawValue:)) ?? fallback
    }
}
