// Times TokenVerifier.verify in process: for each key given, a token it signed, checked with
// the cache off (the signature and claims every time) and on (a lookup by the token's bytes).
// The keys and tokens are made by Benchmarks/auth/run.py with PyJWT.
// Usage: TokenBenchmark NAME KEY-KIND KEY-FILE TOKEN-FILE...   (KEY-KIND: secret or pem)
import TokenAuth

#if canImport(Glibc)
    import Glibc
#endif

func read(_ path: String) -> [UInt8] {
    do {
        return try KeyFile.read(path)
    } catch {
        fatalError("\(error)")
    }
}

func microseconds(_ runs: Int, _ body: () -> Void) -> Double {
    let start = ContinuousClock.now
    for _ in 0..<runs { body() }
    let elapsed = (ContinuousClock.now - start).components
    return (Double(elapsed.seconds) * 1e6 + Double(elapsed.attoseconds) / 1e12) / Double(runs)
}

var arguments = CommandLine.arguments.dropFirst()
while arguments.count >= 4 {
    let name = arguments.removeFirst()
    let kind = arguments.removeFirst()
    let keyPath = arguments.removeFirst()
    let tokenPath = arguments.removeFirst()
    let key =
        try kind == "secret"
        ? VerificationKey.secret(read(keyPath), origin: keyPath)
        : VerificationKey.publicKey(pem: String(decoding: read(keyPath), as: UTF8.self), origin: keyPath)
    let token = Substring(String(decoding: read(tokenPath), as: UTF8.self).trimmingCharacters(in: "\n"))
    var uncachedPolicy = TokenVerifier.Policy()
    uncachedPolicy.cacheLimit = 0
    let now = Int64(time(nil))
    let uncached = TokenVerifier(keys: [key], policy: uncachedPolicy, now: now)
    let cached = TokenVerifier(keys: [key], now: now)
    guard case .success = uncached.verify(token, now: now) else { fatalError("\(name): the token does not verify") }
    let runs = kind == "secret" ? 20_000 : 2_000
    let full = microseconds(runs) { _ = uncached.verify(token, now: now) }
    let remembered = microseconds(200_000) { _ = cached.verify(token, now: now) }
    print("\(name): \(String(format: "%.1f", full)) µs a token checked in full, \(String(format: "%.2f", remembered)) µs remembered")
}

extension String {
    func trimmingCharacters(in character: Character) -> Substring {
        var result = Substring(self)
        while result.last == character { result = result.dropLast() }
        return result
    }
}

func String(format: String, _ value: Double) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    let count = withVaList([value]) { vsnprintf(&buffer, buffer.count, format, $0) }
    return String(decoding: buffer.prefix(Int(max(0, count))).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
