import Foundation
import LiveCollections
import PropertyBased
import TestSupport
import Testing

/// String and UUID ids are hashed by the diff itself (`KeyedIdentityHash`), not by `Hasher`:
/// the deltas must be what they are for any other id, and Swift's String equality (canonical
/// equivalence) must still decide which ids are one.
@Suite struct KeyedIdentityHashTests {
    struct Named: UniquelyIdentifiable, Sendable {
        var id: String
        var content: Int
        var uniqueID: String { id }
    }

    struct Tagged: UniquelyIdentifiable, Sendable {
        var id: UUID
        var content: Int
        var uniqueID: UUID { id }
    }

    /// Spellings of every length from 0 to 40, so that each way the hash reads a string's end
    /// (none, bytes, two 4-byte words, two 8-byte words, after 16-byte blocks) is met.
    static func ascii(_ id: Int) -> String { String(String("\(id)-" + String(repeating: "abcdefgh", count: 5)).prefix(id % 41)) + "\(id)" }

    /// A spelling of `id` that is not ASCII on one side and is on the other, while Swift
    /// counts the two equal: KELVIN SIGN is canonically "K", and "é" is "e" and U+0301.
    static func canonical(_ id: Int, old: Bool) -> String {
        switch id % 3 {
        case 0: (old ? "K" : "\u{212A}") + "\(id)"
        case 1: (old ? "caf\u{E9}" : "cafe\u{301}") + "\(id)"
        default: ascii(id)
        }
    }

    static func uuid(_ id: Int) -> UUID {
        // Ids that differ in one byte only, at either end: every byte must count.
        var bytes = [UInt8](repeating: 0xA5, count: 16)
        bytes[id % 2 == 0 ? 0 : 15] = UInt8(id & 0xFF)
        bytes[7] = UInt8(id >> 8 & 0xFF)
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11], bytes[12],
                bytes[13], bytes[14], bytes[15]
            ))
    }

    /// The delta of `old` to `new`, the case respelled, is the delta of its Int ids.
    static func expectSameDelta<Item: UniquelyIdentifiable>(_ flat: FlatCase, _ old: [Item], _ new: [Item]) throws {
        let expected = try IndexDelta(from: flat.old, to: flat.new)
        let delta = try IndexDelta(from: old, to: new)
        #expect(delta == expected)
        #expect(try delta.replay(old: old, new: new) == new)
        #expect(delta.moves.count == minimumMoves(old: flat.old.map(\.id), new: flat.new.map(\.id)))
    }

    @Test func asciiStringIdsGiveTheDeltaOfTheirInts() async throws {
        await propertyCheck(count: 300, input: Gens.flatCase) { flat in
            try Self.expectSameDelta(
                flat, flat.old.map { Named(id: Self.ascii($0.id), content: $0.content) },
                flat.new.map { Named(id: Self.ascii($0.id), content: $0.content) })
        }
    }

    @Test func canonicallyEqualStringIdsAreOneItem() async throws {
        await propertyCheck(count: 300, input: Gens.flatCase) { flat in
            try Self.expectSameDelta(
                flat, flat.old.map { Named(id: Self.canonical($0.id, old: true), content: $0.content) },
                flat.new.map { Named(id: Self.canonical($0.id, old: false), content: $0.content) })
        }
    }

    @Test func uuidIdsGiveTheDeltaOfTheirInts() async throws {
        await propertyCheck(count: 300, input: Gens.flatCase) { flat in
            try Self.expectSameDelta(
                flat, flat.old.map { Tagged(id: Self.uuid($0.id), content: $0.content) },
                flat.new.map { Tagged(id: Self.uuid($0.id), content: $0.content) })
        }
    }

    @Test func lastOfTenThousandToTheFrontIsOneMoveForEitherKind() throws {
        let strings = (0..<10_000).map { _ in Named(id: UUID().uuidString, content: 0) }
        let movedString = [strings[9_999]] + Array(strings[..<9_999])
        #expect(try IndexDelta(from: strings, to: movedString) == IndexDelta(moves: [IndexPair(source: 9_999, target: 0)]))
        let uuids = (0..<10_000).map { _ in Tagged(id: UUID(), content: 0) }
        let movedUUID = [uuids[9_999]] + Array(uuids[..<9_999])
        #expect(try IndexDelta(from: uuids, to: movedUUID) == IndexDelta(moves: [IndexPair(source: 9_999, target: 0)]))
    }

    @Test func duplicatesAreFoundInEitherKindAndEitherSpelling() throws {
        let ascii = try #require(throws: DuplicateIdentifierError.self) {
            try IndexDelta(from: [Named(id: "a", content: 0), Named(id: "b", content: 0), Named(id: "a", content: 1)], to: [Named]())
        }
        #expect(ascii.collection == .old && ascii.firstPosition == .index(0) && ascii.secondPosition == .index(2))
        let canonical = try #require(throws: DuplicateIdentifierError.self) {
            try IndexDelta(from: [Named](), to: [Named(id: "K1", content: 0), Named(id: "\u{212A}1", content: 0)])
        }
        #expect(canonical.collection == .new && canonical.firstPosition == .index(0) && canonical.secondPosition == .index(1))
        let id = UUID()
        let uuid = try #require(throws: DuplicateIdentifierError.self) {
            try IndexDelta(
                from: [Tagged(id: id, content: 0)], to: [Tagged(id: UUID(), content: 0), Tagged(id: id, content: 0), Tagged(id: id, content: 1)])
        }
        #expect(uuid.collection == .new && uuid.firstPosition == .index(1) && uuid.secondPosition == .index(2))
    }
}
