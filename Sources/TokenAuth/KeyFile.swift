#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Files that hold keys: secrets, PEM public keys, JWK Sets (and other small files the
/// operator names, such as a sources file).
package enum KeyFile {
    /// The file's bytes; a key file is small, so more than 1 MiB is refused as not `what`.
    package static func read(_ path: String, what: String = "a key") throws(KeyError) -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw KeyError(description: "\(path): cannot be read (\(String(cString: strerror(errno))))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk[0..<count]
            guard bytes.count <= 1 << 20 else { throw KeyError(description: "\(path): larger than 1 MiB, not \(what)") }
        }
        return bytes
    }
}
