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
    /// The method as sent is not a token (a control byte, a NUL among them, or a separator).
    private var badMethod = false

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
        /// The first header whose value holds a control byte (a NUL included).
        var controlIn: String?
        /// Where the last header's value ended (its C string's end), and its name, until the
        /// next header shows where its line ended.
        private var open: (end: UnsafePointer<UInt8>, name: UnsafeBufferPointer<UInt8>)?

        /// Notes a header's place. libmicrohttpd reads the head in place, one buffer, ending
        /// each name and value with a NUL written over the separator after it; a NUL sent
        /// inside a value ends its C string early, and what followed it is lost, so the bytes
        /// from a value's end up to the next header's name must be NULs and white space only.
        mutating func noteSpan(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
            if let open, let start = name.baseAddress {
                let gap = start - open.end
                // Another layout than one buffer read in place: nothing to compare.
                if gap > 0 && gap <= 64 && !(0..<gap).allSatisfy({ Self.lineEnd(open.end[$0]) }) { noteControl(in: open.name) }
            }
            if !RequestHead.fieldValue(value) { noteControl(in: name) }
            open = value.baseAddress.map { ($0 + value.count, name) }
        }

        /// After the last header, the line ends (two bytes at least, NULs now) come first.
        mutating func closeSpans() {
            if let open, !(Self.lineEnd(open.end[0]) && open.end[0] == 0 && open.end[1] == 0) { noteControl(in: open.name) }
            open = nil
        }

        private static func lineEnd(_ byte: UInt8) -> Bool { byte == 0 || byte == 0x20 || byte == 0x09 }

        private mutating func noteControl(in name: UnsafeBufferPointer<UInt8>) {
            if controlIn == nil { controlIn = String(decoding: name, as: UTF8.self) }
        }

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

    /// Whether a field value holds only what RFC 9110 allows in one: visible characters,
    /// spaces, tabs and bytes from 0x80 (no control byte, no DEL).
    static func fieldValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 >= 0x20 ? $0 != 0x7F : $0 == 0x09 }
    }

    /// Whether the method as sent is a token (RFC 9110): libmicrohttpd hands it over as a C
    /// string, cut at a NUL, so the bytes between its end and the path (which libmicrohttpd
    /// reads in place, in one buffer) must be the one space it turned into the string's end,
    /// and any further spaces.
    static func wellFormedMethod(_ method: UnsafePointer<CChar>, url: UnsafePointer<CChar>) -> Bool {
        let length = strlen(method)
        let bytes = UnsafeRawPointer(method).assumingMemoryBound(to: UInt8.self)
        let token = UnsafeBufferPointer(start: bytes, count: length).allSatisfy { byte in
            (0x21...0x7E).contains(byte) && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
        }
        guard length > 0, token else { return false }
        let gap = UnsafeRawPointer(url) - UnsafeRawPointer(method)
        // Another layout than one buffer read in place: nothing to compare.
        guard gap > length, gap <= 64 else { return true }
        return bytes[length] == 0 && (length + 1..<gap).allSatisfy { bytes[$0] == 0x20 }
    }

    init(_ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?) {
        self.method = String(cString: method)
        badMethod = !Self.wellFormedMethod(method, url: url)
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
                    let nameField = UnsafeBufferPointer(start: nameBytes, count: strlen(name))
                    let valueField = UnsafeBufferPointer(start: valueBytes, count: value.map { strlen($0) } ?? 0)
                    read.pointee.headers.append(name: nameField, value: valueField)
                    read.pointee.framing.note(name, value)
                    read.pointee.framing.noteSpan(name: nameField, value: valueField)
                    return .YES
                }, pointer)
        }
        read.framing.closeSpans()
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
        if badMethod { return .badRequest("the request's method holds a byte a method may not (a control byte, a NUL, or a separator)") }
        if let name = framing.controlIn {
            return .badRequest(
                "the header \"\(name)\" holds a control byte (a NUL, or another below 0x20 but the tab), which HTTP does not allow in a field")
        }
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
