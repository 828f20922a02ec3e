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

    /// The declared body length, once the head has passed `problem`.
    var contentLength: Int? { values("Content-Length").first.flatMap { Int($0.trimmingHTTPSpaces) } }

    /// Whether the client waits for `100 Continue` before it sends the body.
    var expectsContinue: Bool { values("Expect").contains { $0.trimmingHTTPSpaces.equalsIgnoringASCIICase("100-continue") } }

    /// Why the request cannot be served as framed, if it cannot.
    func problem(maxURILength: Int, maxHeaderBytes: Int) -> HTTPServerError? {
        if path.utf8.count > maxURILength { return .uriTooLong(limit: maxURILength) }
        if size > maxHeaderBytes { return .headersTooLarge(limit: maxHeaderBytes) }
        if let name = headers.first(where: { $0.name.utf8.contains { $0 == 0x20 || $0 == 0x09 } })?.name {
            return .badRequest("the header name \"\(name.trimmingHTTPSpaces)\" has white space before its colon, which HTTP/1.1 does not allow")
        }
        let lengths = values("Content-Length")
        if lengths.count > 1 { return .badRequest("the request has \(lengths.count) Content-Length headers; it may have one") }
        if let length = lengths.first, Int(length.trimmingHTTPSpaces).map({ $0 < 0 }) ?? true {
            return .badRequest("Content-Length must be a whole number of bytes, not \"\(length)\"")
        }
        let codings = values("Transfer-Encoding")
        if !codings.isEmpty {
            if !lengths.isEmpty { return .badRequest("the request has both Transfer-Encoding and Content-Length; it may have one") }
            let coding = codings.joined(separator: ",").trimmingHTTPSpaces
            guard codings.count == 1, coding.equalsIgnoringASCIICase("chunked") else { return .unsupportedTransferCoding(coding) }
        }
        let hosts = values("Host")
        if hosts.count > 1 { return .badRequest("the request has \(hosts.count) Host headers; it may have one") }
        if hosts.isEmpty && version == "HTTP/1.1" { return .badRequest("an HTTP/1.1 request needs a Host header") }
        return nil
    }
}

extension String {
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        utf8.count == other.utf8.count
            && zip(utf8, other.utf8).allSatisfy { a, b in a == b || (a ^ b == 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A) }
    }

    /// Without the spaces and tabs HTTP allows around a field value.
    var trimmingHTTPSpaces: String {
        var bytes = Substring(self).utf8[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return String(Substring(bytes))
    }
}
