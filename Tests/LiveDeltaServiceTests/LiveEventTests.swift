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
}
