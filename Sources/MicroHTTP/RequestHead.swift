import CMicroHTTPD

/// A request's line and headers as libmicrohttpd parsed them, checked against HTTP/1.1's
/// framing rules (RFC 9112) before any body is read. libmicrohttpd is lenient where leniency
/// lets a request be framed two ways (by a proxy one way, by us another), so the server
/// refuses those itself.
struct RequestHead {
    var method: String
    var path: String
    var version: String
    var headers: [(name: String, value: String)]
    /// Bytes of the request line and headers, as libmicrohttpd counted them.
    var size: Int

    init(_ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?) {
        self.method = String(cString: method)
        path = String(cString: url)
        self.version = version.map { String(cString: $0) } ?? ""
        size = cmhd_request_header_size(connection)
        var headers = [(name: String, value: String)]()
        headers.reserveCapacity(8)
        withUnsafeMutablePointer(to: &headers) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, { context, _, name, value in
                guard let context, let name else { return .YES }
                context.assumingMemoryBound(to: [(name: String, value: String)].self).pointee
                    .append((String(cString: name), value.map { String(cString: $0) } ?? ""))
                return .YES
            }, pointer)
        }
        self.headers = headers
    }

    /// The values of a header, by case-insensitive name.
    func values(_ name: String) -> [String] {
        headers.compactMap { $0.name.equalsIgnoringASCIICase(name) ? $0.value : nil }
    }

    /// A header's first value and how many times it is sent, without gathering the values.
    func field(_ name: String) -> (first: String?, count: Int) {
        var first: String?
        var count = 0
        for header in headers where header.name.equalsIgnoringASCIICase(name) {
            if count == 0 { first = header.value }
            count += 1
        }
        return (first, count)
    }

    /// The declared body length, once the head has passed `problem`.
    var contentLength: Int? { field("Content-Length").first.flatMap { Int($0.trimmingHTTPSpaces) } }

    /// Whether the client waits for `100 Continue` before it sends the body.
    var expectsContinue: Bool { values("Expect").contains { $0.trimmingHTTPSpaces.equalsIgnoringASCIICase("100-continue") } }

    /// Why the request cannot be served as framed, if it cannot.
    func problem(maxURILength: Int, maxHeaderBytes: Int) -> HTTPServerError? {
        if path.utf8.count > maxURILength { return .uriTooLong(limit: maxURILength) }
        if size > maxHeaderBytes { return .headersTooLarge(limit: maxHeaderBytes) }
        if let name = headers.first(where: { $0.name.utf8.contains { $0 == 0x20 || $0 == 0x09 } })?.name {
            return .badRequest("the header name \"\(name.trimmingHTTPSpaces)\" has white space before its colon, which HTTP/1.1 does not allow")
        }
        let lengths = field("Content-Length")
        if lengths.count > 1 { return .badRequest("the request has \(lengths.count) Content-Length headers; it may have one") }
        if let length = lengths.first, Int(length.trimmingHTTPSpaces).map({ $0 < 0 }) ?? true {
            return .badRequest("Content-Length must be a whole number of bytes, not \"\(length)\"")
        }
        if field("Transfer-Encoding").count > 0 {
            let codings = values("Transfer-Encoding")
            if lengths.count > 0 { return .badRequest("the request has both Transfer-Encoding and Content-Length; it may have one") }
            let coding = codings.joined(separator: ",").trimmingHTTPSpaces
            guard codings.count == 1, coding.equalsIgnoringASCIICase("chunked") else { return .unsupportedTransferCoding(coding) }
        }
        let hosts = field("Host").count
        if hosts > 1 { return .badRequest("the request has \(hosts) Host headers; it may have one") }
        if hosts == 0 && version == "HTTP/1.1" { return .badRequest("an HTTP/1.1 request needs a Host header") }
        return nil
    }
}

extension String {
    /// Equal but for the case of ASCII letters (as header names and many values compare).
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        // Over the bytes themselves: stepping two UTF8Views in step costs more than the test.
        var (a, b) = (self, other)
        return a.withUTF8 { a in
            b.withUTF8 { b in
                for k in 0..<a.count where a[k] != b[k] {
                    let lower = a[k] | 0x20
                    guard a[k] ^ b[k] == 0x20, lower >= 0x61, lower <= 0x7A else { return false }
                }
                return true
            }
        }
    }

    /// Without the spaces and tabs HTTP allows around a field value.
    var trimmingHTTPSpaces: String {
        var bytes = Substring(self).utf8[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return String(Substring(bytes))
    }
}
