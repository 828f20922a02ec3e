import Testing

@testable import LiveDeltaService

/// An event as `text/event-stream` spells it: every line break of its data (JSON allows them
/// between tokens, and an item's text is kept as it was sent) starts a `data:` line of its own,
/// so that a client joining them with line feeds reads the same JSON.
@Suite struct LiveEventTests {
    @Test(arguments: [
        ("{\"a\":1}", "data: {\"a\":1}\n"),
        ("{\n\"a\":1\n}", "data: {\ndata: \"a\":1\ndata: }\n"),
        ("[1,\r\n2,\r3]", "data: [1,\ndata: 2,\ndata: 3]\n"),
        ("[1]\n", "data: [1]\ndata: \n"),
        ("\r\n\n[]", "data: \ndata: \ndata: []\n"),
    ])
    func lineBreaksStartDataLines(data: String, lines: String) {
        let event = LiveEvent(name: .delta, id: "7~1", data: Array(data.utf8))
        #expect(String(decoding: event.serverSent.bytes, as: UTF8.self) == "id: 7~1\nevent: delta\n" + lines + "\n")
        let anonymous = LiveEvent(name: .source, id: nil, data: Array(data.utf8))
        #expect(String(decoding: anonymous.serverSent.bytes, as: UTF8.self) == "event: source\n" + lines + "\n")
    }

    /// A window's token is spelled without interpolation (a fan-out spells thousands a
    /// commit): it must read back as the same position and rows, at every width of number.
    @Test(arguments: [(UInt64(0), 0, 0), (9, 10, 99), (10, 1_000_000, 50), (UInt64.max, 1 << 40, 1 << 30), (123_456_789, 7, 1)])
    func aWindowTokenReadsBackAsItWasSpelled(version: UInt64, first: Int, count: Int) {
        let token = WindowToken(position: LivePosition(incarnation: "k3x9z", version: version), rows: first..<first + count)
        #expect(token.token == "k3x9z.\(version)~\(first)-\(count)")
        #expect(WindowToken(token: token.token) == token)
    }
}
