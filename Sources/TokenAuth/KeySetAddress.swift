import CCurl

/// A JWK Set published at an address (an issuer's `jwks_uri`), fetched with libcurl.
package enum KeySetAddress {
    /// Whether `text` names an address rather than a file.
    package static func isAddress(_ text: String) -> Bool {
        text.hasPrefix("https://") || text.hasPrefix("http://")
    }

    /// The set's bytes, or why it could not be fetched (a status other than 200, a timeout, a
    /// set over 1 MiB).
    package static func fetch(_ address: String, timeoutMilliseconds: Int = 5_000) throws(KeyError) -> [UInt8] {
        var body: UnsafeMutablePointer<UInt8>?
        var length = 0
        var error = [CChar](repeating: 0, count: 256)
        let status = ccurl_get(address, timeoutMilliseconds, 1 << 20, &body, &length, &error, error.count)
        defer { ccurl_free(body) }
        guard status >= 0 else {
            let message = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw KeyError(description: "\(address): \(message)")
        }
        guard status == 200 else { throw KeyError(description: "\(address): answered \(status)") }
        guard let body else { return [] }
        return Array(UnsafeBufferPointer(start: body, count: length))
    }
}
