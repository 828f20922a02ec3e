import Foundation
import LiveDeltaKit
import TestSupport
import Testing

// A file that imports LiveDeltaKit still reaches Swift's own protocols by their names: the
// module declares no type named like one (its collection to send is `SessionCollection`). Were
// it to, this extension would extend that type instead, and stop compiling.
extension Collection where Element == Row {
    fileprivate var ids: [Int] { map(\.id) }
}

@Test func swiftsCollectionIsNotHiddenByTheModule() {
    #expect([Row(id: 1, v: 0), Row(id: 2, v: 0)].ids == [1, 2])
    let sent: SessionCollection<Row> = .items([Row(id: 1, v: 0)])
    if case .items(let items) = sent { #expect(items.ids == [1]) }
}

/// Integers keep every digit through `JSONValue` (ids past 2^53 are common: snowflakes), and a
/// whole number still equals the same integer.
@Test func jsonValueKeepsIntegersExactly() throws {
    let text = #"{"id":9007199254740993,"n":[1,2.5,-7,1e3]}"#
    let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    #expect(value["id"] == .integer(9_007_199_254_740_993))
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let again = String(decoding: try encoder.encode(value), as: UTF8.self)
    #expect(again.contains("9007199254740993"), "\(again)")
    #expect(JSONValue.integer(2) == .number(2) && Set([JSONValue.integer(2), .number(2)]).count == 1)
    #expect(JSONValue.integer(2) != .number(2.5))
}

/// A number a Double would change keeps its digits, read and written back, and through the
/// server; one a Double holds as written stays a number.
@Test func jsonValueKeepsTheDigitsADoubleWouldLose() async throws {
    let texts = ["123456789012345678901234567890", "0.1000000000000000055511151231257827", "9.999999999999999e22", "-18446744073709551617"]
    for text in texts {
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(value == .decimal(Decimal(string: text)!), "\(text): \(value)")
        let again = try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(value))
        #expect(again == value, "\(text) written back")
    }
    for (text, number) in [("0.1", 0.1), ("2.5e-5", 2.5e-5), ("1.7976931348623157e308", 1.7976931348623157e308), ("-0.0", -0.0)] {
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) == .number(number), "\(text)")
    }
    let server = try ServerProcess()
    defer { _ = server.stop() }
    let client = ClientTests.client(server)
    let items: [JSONValue] = try texts.enumerated().map { index, text in
        .object(["id": .integer(index), "price": try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))])
    }
    _ = try await client.putSession("prices", .items(items))
    let read: SessionState<JSONValue> = try await client.session("prices")
    #expect(read.items == items)
}
