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
