import TestSupport
import Testing

@testable import MicroHTTP

@Suite struct RequestHeadTests {
    /// Content-Length is read from libmicrohttpd's C string as it arrives: digits only, with the
    /// spaces and tabs HTTP allows around a value, and nothing that overflows.
    @Test func aContentLengthIsDigitsAndNothingElse() {
        let cases: [(String, Int?)] = [
            ("0", 0), ("21", 21), ("0021", 21), (" 7", 7), ("7\t", 7), ("\t 42 \t", 42),
            ("9223372036854775807", Int.max), ("9223372036854775808", nil), ("99999999999999999999", nil),
            ("", nil), (" ", nil), ("+5", nil), ("-1", nil), ("-0", nil), ("1 2", nil), ("12x", nil), ("x12", nil),
            ("1.0", nil), ("0x10", nil), ("١٢", nil),
        ]
        for (text, expected) in cases {
            #expect(text.withCString(RequestHead.wholeNumber) == expected, "Content-Length: \(text)")
        }
    }

    /// The number read that way frames the body: the handler gets exactly the declared bytes.
    @Test func aDeclaredLengthFramesTheBody() throws {
        let server = try echoServer()
        defer { server.stop() }
        for length in ["5", "   5", "\t5"] {
            let connection = try HTTPConnection(port: server.port)
            try connection.send(raw: Array("POST /n HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\n\r\nabcde".utf8))
            let reply = try connection.readReply(method: "POST")
            #expect(reply.status == 200 && reply.text == "abcde", "Content-Length: \(length)")
        }
    }

    @Test func aHeaderValueIsComparedWithoutCase() {
        let fields = HeaderFields([("content-TYPE", "Application/JSON"), ("Content-Type", "text/plain"), ("X-At", "@")])
        let request = HTTPRequest(method: "POST", path: "/", fields: fields, body: .init([]))
        #expect(request.header("Content-Type", equalsIgnoringASCIICase: "application/json"))
        // Only the first field of a name counts, as for `header(_:)`.
        #expect(!request.header("content-type", equalsIgnoringASCIICase: "text/plain"))
        #expect(!request.header("Content-Type", equalsIgnoringASCIICase: "application/jso"))
        #expect(!request.header("Content-Type", equalsIgnoringASCIICase: "application/jsonx"))
        #expect(!request.header("Accept", equalsIgnoringASCIICase: "application/json"))
        // Case is ASCII letters' only: "@" and "`" differ by the same bit as "A" and "a".
        #expect(request.header("x-at", equalsIgnoringASCIICase: "@") && !request.header("x-at", equalsIgnoringASCIICase: "`"))
    }
}
