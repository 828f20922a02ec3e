import Foundation
import LiveDeltaKit
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
