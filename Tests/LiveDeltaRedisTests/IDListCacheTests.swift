import Testing

@testable import LiveDeltaRedis

/// A replica's kept id-hash lists: a session's are kept for one life, without the parts its
/// last manifest no longer names, and within a bound in bytes, the session searched least
/// recently going first.
@Suite struct IDListCacheTests {
    @Test func listsAreKeptForOneLifeWithinTheBound() {
        let cache = IDListCache(maxBytes: 100)
        let (life, version) = (Array("x1".utf8), Array("1".utf8))
        cache.keep(
            "a", incarnation: life, ["0": [UInt8](repeating: 1, count: 40), "1": [UInt8](repeating: 2, count: 20)], parts: ["0", "1"],
            version: version)
        #expect(cache.lists("a", incarnation: life).keys.sorted() == ["0", "1"])
        #expect(cache.lists("a", incarnation: Array("x2".utf8)).isEmpty, "another life's lists were given")
        // A part dropped since is not kept.
        cache.keep("a", incarnation: life, cache.lists("a", incarnation: life), parts: ["1"], version: version)
        #expect(cache.lists("a", incarnation: life).keys.sorted() == ["1"])
        cache.keep("b", incarnation: life, ["0": [UInt8](repeating: 3, count: 60)], parts: ["0"], version: version)
        #expect(cache.lists("a", incarnation: life).count == 1 && cache.lists("b", incarnation: life).count == 1)
        // c takes the room of the one searched least recently: a (b was asked for last).
        cache.keep("c", incarnation: life, ["0": [UInt8](repeating: 4, count: 30)], parts: ["0"], version: version)
        #expect(cache.lists("a", incarnation: life).isEmpty)
        #expect(cache.lists("b", incarnation: life).count == 1 && cache.lists("c", incarnation: life).count == 1)
        // Lists past the bound alone are not kept, and the session's earlier ones go.
        cache.keep("b", incarnation: life, ["0": [UInt8](repeating: 5, count: 101)], parts: ["0"], version: version)
        #expect(cache.lists("b", incarnation: life).isEmpty && cache.lists("c", incarnation: life).count == 1)
    }

    /// The lists of a version are given in its parts' order once every part's is kept, for
    /// that version (and life) alone.
    @Test func everyPartsListIsGivenInOrderForItsVersion() {
        let cache = IDListCache()
        let life = Array("x1".utf8)
        let (a, b) = ([UInt8](repeating: 1, count: 8), [UInt8](repeating: 2, count: 4))
        cache.keep("s", incarnation: life, ["a": a], parts: ["b", "a"], version: Array("3".utf8))
        #expect(cache.ordered("s", incarnation: life, version: Array("3".utf8)) == nil, "a part's list is missing")
        cache.keep("s", incarnation: life, ["a": a, "b": b], parts: ["b", "a"], version: Array("3".utf8))
        #expect(cache.ordered("s", incarnation: life, version: Array("3".utf8)) == [b, a])
        #expect(cache.ordered("s", incarnation: life, version: Array("4".utf8)) == nil)
        #expect(cache.ordered("s", incarnation: Array("x2".utf8), version: Array("3".utf8)) == nil)
    }
}
