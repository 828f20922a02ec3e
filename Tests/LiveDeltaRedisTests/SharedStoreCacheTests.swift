import LiveDeltaRedis
import LiveDeltaService
import MicroHTTP
import RedisClient
import TestSupport
import Testing

/// A replica's parsed copies of Redis sessions hold at most `cachedBytes` together; copies
/// dropped from the cache are read from Redis again when needed.
@Suite(.serialized) struct SharedStoreCacheTests {
    /// A flat collection of `ids`, its body padded with spaces to `bytes` in all.
    func padded(_ ids: [Int], to bytes: Int) throws -> JSONCollection {
        let json = "[" + ids.map(String.init).joined(separator: ",") + "]"
        return try CollectionDocument.read(ByteBuffer(Array((json + String(repeating: " ", count: max(0, bytes - json.utf8.count))).utf8)))
    }

    @Test func keptCopiesHoldAtMostTheConfiguredBytes() throws {
        let redis = try RedisProcess()
        defer { redis.stop() }
        var limits = SharedSessionStore.Limits()
        // Room for three copies of one-item bodies of 3,000 bytes, not four.
        limits.cachedBytes = 11_000
        let store = SharedSessionStore.redis(RedisPool(try #require(RedisConfiguration(url: redis.url))), limits: limits)
        for (index, id) in ["a", "b", "c", "d"].enumerated() {
            _ = try store.put(id: id, options: DiffOptions(), collection: try padded([index], to: 3_000))
            #expect(store.cachedBytes <= 11_000)
        }
        // Four padded bodies do not fit: the oldest copy went.
        let oneCopy = 3_000 + SessionFootprint.bytesPerBody + SessionFootprint.bytesPerItem
        #expect(store.cachedBytes == 3 * oneCopy && store.statistics.open == 3)
        // Appends move a kept copy on in place; its bytes are counted again.
        _ = try store.append(id: "d", try padded([7], to: 5_000), readWith: DiffOptions(), condition: .any)
        #expect(store.cachedBytes <= 11_000 && store.statistics.open == 1)
        // Every session is still there, read from Redis where its copy was dropped.
        for id in ["a", "b", "c"] {
            let snapshot = try store.snapshot(id: id)
            #expect(snapshot.version == 0 && snapshot.collection.itemCount == 1, "\(id)")
            #expect(store.cachedBytes <= 11_000)
        }
        #expect(try store.snapshot(id: "d").collection.itemCount == 2)
    }
}
