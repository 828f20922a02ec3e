import CMicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A request's line and headers as libmicrohttpd parsed them, checked against HTTP/1.1's
/// framing rules (RFC 9112) before any body is read. libmicrohttpd is lenient where leniency
/// lets a request be framed two ways (by a proxy one way, by us another), so the server
/// refuses those itself.
struct RequestHead {
    var method: String
    var path: String
    var version: String
    var headers: HeaderFields
    /// The query string's parameters.
    var query: [(name: String, value: String)] = []
    /// Bytes of the request line and headers, as libmicrohttpd counted them.
    var size: Int
    /// The headers framing depends on, noted as the headers are read.
    private var framing = Framing()

    /// What `problem` and `contentLength` need, gathered from the C strings in the one pass
    /// that makes `headers`, so that checking a head walks no Swift strings.
    private struct Framing {
        var contentLengths = 0
        /// The first Content-Length's value, where it is a whole number of bytes.
        var contentLength: Int?
        /// The first Content-Length's value as sent, kept only where it is not a whole number.
        var badContentLength: String?
        var transferEncodings = 0
        var hosts = 0
        /// The first header name with white space in it.
        var spacedName: String?

        mutating func note(_ name: UnsafePointer<CChar>, _ value: UnsafePointer<CChar>?) {
            if strcasecmp(name, "Content-Length") == 0 {
                if contentLengths == 0 {
                    contentLength = value.flatMap(RequestHead.wholeNumber)
                    if contentLength == nil { badContentLength = value.map { String(cString: $0) } ?? "" }
                }
                contentLengths += 1
            } else if strcasecmp(name, "Transfer-Encoding") == 0 {
                transferEncodings += 1
            } else if strcasecmp(name, "Host") == 0 {
                hosts += 1
            }
            if spacedName == nil, strpbrk(name, " \t") != nil { spacedName = String(cString: name) }
        }
    }

    init(_ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?) {
        self.method = String(cString: method)
        path = String(cString: url)
        self.version = version.map { String(cString: $0) } ?? ""
        size = cmhd_request_header_size(connection)
        var read = (headers: HeaderFields(), framing: Framing())
        read.headers.reserve(512)
        withUnsafeMutablePointer(to: &read) { pointer in
            _ = MHD_get_connection_values(
                connection, .HEADER_KIND,
                { context, _, name, value in
                    guard let context, let name else { return .YES }
                    let read = context.assumingMemoryBound(to: (headers: HeaderFields, framing: Framing).self)
                    let nameBytes = UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self)
                    let valueBytes = value.map { UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self) }
                    read.pointee.headers.append(
                        name: UnsafeBufferPointer(start: nameBytes, count: strlen(name)),
                        value: UnsafeBufferPointer(start: valueBytes, count: value.map { strlen($0) } ?? 0))
                    read.pointee.framing.note(name, value)
                    return .YES
                }, pointer)
        }
        headers = read.headers
        framing = read.framing
        withUnsafeMutablePointer(to: &query) { pointer in
            _ = MHD_get_connection_values(
                connection, .GET_ARGUMENT_KIND,
                { context, _, name, value in
                    guard let context, let name else { return .YES }
                    // As sent (see cmhd_start): decoded here, and kept as sent where they
                    // cannot be, as libmicrohttpd's own decoding did.
                    let rawName = String(cString: name)
                    let rawValue = value.map { String(cString: $0) } ?? ""
                    context.assumingMemoryBound(to: [(name: String, value: String)].self).pointee.append(
                        (PercentDecoding.decode(rawName) ?? rawName, PercentDecoding.decode(rawValue) ?? rawValue))
                    return .YES
                }, pointer)
        }
    }

    /// Digits, with the spaces and tabs HTTP allows around a field value, as a number that
    /// fits in an `Int`; nil for anything else (a sign, no digits, other bytes, overflow).
    static func wholeNumber(_ text: UnsafePointer<CChar>) -> Int? {
        var byte = UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self)
        while byte.pointee == 0x20 || byte.pointee == 0x09 { byte += 1 }
        var number = 0
        let first = byte
        while byte.pointee &- 0x30 < 10 {
            let (tens, overflowed) = number.multipliedReportingOverflow(by: 10)
            let (sum, carried) = tens.addingReportingOverflow(Int(byte.pointee &- 0x30))
            guard !overflowed && !carried else { return nil }
            number = sum
            byte += 1
        }
        guard byte != first else { return nil }
        while byte.pointee == 0x20 || byte.pointee == 0x09 { byte += 1 }
        return byte.pointee == 0 ? number : nil
    }

    /// The values of a header, by case-insensitive name.
    func values(_ name: String) -> [String] { headers.values(name) }

    /// The declared body length, once the head has passed `problem`.
    var contentLength: Int? { framing.contentLength }

    /// Whether the client waits for `100 Continue` before it sends the body.
    var expectsContinue: Bool { values("Expect").contains { $0.trimmingHTTPSpaces.equalsIgnoringASCIICase("100-continue") } }

    /// Why the request cannot be served as framed, if it cannot.
    func problem(maxURILength: Int, maxHeaderBytes: Int) -> HTTPServerError? {
        if path.utf8.count > maxURILength { return .uriTooLong(limit: maxURILength) }
        if size > maxHeaderBytes { return .headersTooLarge(limit: maxHeaderBytes) }
        if let name = framing.spacedName {
            return .badRequest("the header name \"\(name.trimmingHTTPSpaces)\" has white space before its colon, which HTTP/1.1 does not allow")
        }
        let lengths = framing.contentLengths
        if lengths > 1 { return .badRequest("the request has \(lengths) Content-Length headers; it may have one") }
        if let length = framing.badContentLength {
            return .badRequest("Content-Length must be a whole number of bytes, not \"\(length)\"")
        }
        if framing.transferEncodings > 0 {
            let codings = values("Transfer-Encoding")
            if lengths > 0 { return .badRequest("the request has both Transfer-Encoding and Content-Length; it may have one") }
            let coding = codings.joined(separator: ",").trimmingHTTPSpaces
            guard codings.count == 1, coding.equalsIgnoringASCIICase("chunked") else { return .unsupportedTransferCoding(coding) }
        }
        let hosts = framing.hosts
        if hosts > 1 { return .badRequest("the request has \(hosts) Host headers; it may have one") }
        if hosts == 0 && version == "HTTP/1.1" { return .badRequest("an HTTP/1.1 request needs a Host header") }
        return nil
    }
}

extension String {
    /// Without the spaces and tabs HTTP allows around a field value.
    var trimmingHTTPSpaces: String {
        var bytes = Substring(self).utf8[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return String(Substring(bytes))
    }
}
