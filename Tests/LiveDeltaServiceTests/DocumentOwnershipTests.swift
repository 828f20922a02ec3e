import LiveDeltaService
import MicroHTTP
import Synchronization
import Testing

/// Items point into their request's body without keeping it alive; whatever holds items holds
/// the documents (`DocumentOwners`). These check that sessions keep the right ones through
/// changes that mix bodies, and, in debug builds, that an item outliving its holder is caught.
@Suite struct DocumentOwnershipTests {
    /// Each item's text, read through the items themselves.
    static func texts(_ collection: JSONCollection) -> [String] {
        switch collection.shape {
        case .flat(let items): items.map { String(decoding: $0.text, as: UTF8.self) }
        case .sectioned(let sections): sections.flatMap { $0.items.map { String(decoding: $0.text, as: UTF8.self) } }
        }
    }

    @Test func aSessionKeepsTheBodiesOfItemsAppendedByDifferentRequests() throws {
        let sessions = InMemorySessionStore()
        // Each body is read inside a function that returns, so only the store can keep it.
        func body(_ json: String) throws -> JSONCollection { try collection(json) }
        _ = try sessions.put(id: "s", options: DiffOptions(), collection: try body(#"[{"id":1,"t":"a"}]"#))
        _ = try sessions.append(id: "s", try body(#"[{"id":2,"t":"b"}]"#), readWith: DiffOptions(), condition: .any)
        let change = try sessions.append(id: "s", try body(#"[{"id":3,"t":"c"}]"#), readWith: DiffOptions(), condition: .any)
        guard case .flat(_, let old, let new) = change.outcome else { Issue.record("not flat"); return }
        #expect(old.map { String(decoding: $0.text, as: UTF8.self) } == [#"{"id":1,"t":"a"}"#, #"{"id":2,"t":"b"}"#])
        #expect(new.count == 3)
        let snapshot = try sessions.snapshot(id: "s")
        #expect(Self.texts(snapshot.collection) == [#"{"id":1,"t":"a"}"#, #"{"id":2,"t":"b"}"#, #"{"id":3,"t":"c"}"#])
    }

    @Test func anUpdateAnswersWithTheOldItemsAndKeepsOnlyTheNewBody() throws {
        let sessions = InMemorySessionStore()
        _ = try sessions.put(id: "s", options: DiffOptions(), collection: try collection(#"[{"id":1,"v":1},{"id":2,"v":1}]"#))
        let change = try sessions.update(
            id: "s", to: try collection(#"[{"id":2,"v":2}]"#), readWith: DiffOptions(), condition: .any, commit: true)
        guard case .flat(let update, let old, _) = change.outcome else { Issue.record("not flat"); return }
        #expect(update.deletedItems.map { String(decoding: $0.text, as: UTF8.self) } == [#"{"id":1,"v":1}"#])
        #expect(old.count == 2)
        #expect(try Self.texts(sessions.snapshot(id: "s").collection) == [#"{"id":2,"v":2}"#])
        // A dry run leaves the session's items (and their body) as they were.
        _ = try sessions.update(id: "s", to: try collection("[]"), readWith: DiffOptions(), condition: .any, commit: false)
        #expect(try Self.texts(sessions.snapshot(id: "s").collection) == [#"{"id":2,"v":2}"#])
    }

    @Test func sectionsAppendedFromTwoBodiesStayReadable() throws {
        let sessions = InMemorySessionStore()
        _ = try sessions.put(id: "s", options: DiffOptions(), collection: try collection(#"{"sections":[{"id":"a","items":[1]}]}"#))
        _ = try sessions.append(
            id: "s", try collection(#"{"sections":[{"id":"b","items":[2,3]}]}"#), readWith: DiffOptions(), condition: .any)
        #expect(try Self.texts(sessions.snapshot(id: "s").collection) == ["1", "2", "3"])
    }

    #if DEBUG
        /// A use after the holder let the document go is a lifetime bug: a debug build counts it
        /// (and a request answers 500), reads the bytes still, and goes on.
        @Test func anItemUsedAfterItsHolderIsGoneIsCountedAndReadsItsBytes() {
            let before = DocumentLifetime.violations.load(ordering: .relaxed)
            var items: [JSONItem] = []
            do {
                let held = try? collection(#"[{"id":1}]"#)
                if case .flat(let read)? = held?.shape { items = read }
            }
            #expect(items.count == 1)
            #expect(String(decoding: items[0].text, as: UTF8.self) == #"{"id":1}"#)
            #expect(DocumentLifetime.violations.load(ordering: .relaxed) > before)
        }
    #endif
}
