import LiveDeltaService
import PropertyBased
import Testing

@testable import LiveDeltaRedis

/// A session's manifest, `name:count,…`, read back as the parts it was written from, and
/// anything else refused rather than half read.
@Suite struct ManifestTests {
    @Test func aManifestReadsBackAsItsParts() async {
        await propertyCheck(input: Gen.int(in: 1...100_000).array(of: 0...40)) { counts in
            let parts = counts.enumerated().map { StoredPart(name: "\($0.offset).\($0.element % 7)", count: $0.element, bytes: 0) }
            #expect(RedisSessionLayout.parts(RedisSessionLayout.manifest(parts)) == parts)
        }
    }

    @Test(arguments: ["a", "a:", ":3", "a:0", "a:1,", ",a:1", "a:1,,b:2", "a:1:2", "a:x", "a:-1", "a:+1", "a:99999999999999999999", "a:1,b"])
    func whatIsNotAManifestIsRefused(_ text: String) {
        #expect(RedisSessionLayout.parts(Array(text.utf8)) == nil, "\(text)")
    }

    @Test func anEmptyManifestNamesNoPartAndAShortOneItsParts() {
        #expect(RedisSessionLayout.parts([]) == [])
        #expect(
            RedisSessionLayout.parts(Array("a:1,b:22".utf8)) == [
                StoredPart(name: "a", count: 1, bytes: 0), StoredPart(name: "b", count: 22, bytes: 0),
            ])
    }
}
