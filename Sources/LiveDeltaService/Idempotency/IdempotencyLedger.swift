import MicroHTTP

/// A write's first answer, kept under its `Idempotency-Key` so that a retry (the client lost
/// the answer) gets it again instead of writing twice.
package struct RecordedAnswer: Sendable, Equatable {
    package var status: Int
    /// The headers that describe the outcome (`Content-Type`, `ETag`, `Location`).
    package var headers: [Header]
    package var body: [UInt8]

    package struct Header: Sendable, Equatable {
        package var name: String
        package var value: String

        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    package init(status: Int, headers: [Header], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The headers kept from an answer: those a client reads the outcome from.
    static let keptHeaders: Set<String> = ["content-type", "etag", "location"]

    init(_ response: HTTPResponse) {
        self.init(
            status: response.status,
            headers: response.headers.filter { Self.keptHeaders.contains($0.name.lowercased()) }.map { Header(name: $0.name, value: $0.value) },
            body: response.body)
    }

    /// What is kept in place of `answer` where its body is over `limit` bytes: a 409 that says
    /// the write took effect and the session is to be read, with the outcome's headers (the
    /// version in `ETag`, a created session's `Location`).
    static func notKept(_ answer: RecordedAnswer, limit: Int) -> RecordedAnswer {
        var kept = RecordedAnswer(
            APIError(
                .idempotencyAnswerLost,
                message:
                    "the first request with this Idempotency-Key took effect, but its answer (\(answer.body.count) bytes) was larger than answers are kept (\(limit) bytes, --idempotency-max-answer-bytes, LIVEDELTA_IDEMPOTENCY_MAX_ANSWER_BYTES); read the session to see its state now (ETag holds the version the write made)"
            ).response)
        kept.headers += answer.headers.filter { $0.name.lowercased() != "content-type" }
        return kept
    }

    var response: HTTPResponse {
        HTTPResponse(status: status, headers: headers.map { ($0.name, $0.value) } + [("Idempotent-Replayed", "true")], body: body)
    }

    /// What it takes of a ledger's memory bound.
    var bytes: Int { body.count + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count } + 64 }
}

/// What a ledger says of a key a write arrives with.
package enum IdempotencyClaim: Sendable, Equatable {
    /// The key is new: this request runs, and its answer is recorded (or the key let go).
    /// `hold` is what a shared store's commit checks and marks in the same step (nil for a
    /// ledger kept in this process, which goes with the sessions when it stops).
    case claimed(IdempotencyHold?)
    /// A request with the same key and fingerprint has finished: its answer, again.
    case answered(RecordedAnswer)
    /// A request with the same key and fingerprint is running now.
    case running
    /// The key was used for another request (another body, route or condition).
    case reused
    /// A request with the same key and fingerprint committed, and its answer is not kept yet:
    /// it is about to be, or (still so after a while) its server stopped in between, and the
    /// answer is lost.
    case unanswered
}

/// A claimed key as a shared store's commit sees it: the commit goes ahead only while `key`
/// holds `claim` (so a request that outlived its claim, taken over by a retry, writes nothing),
/// and in the same step marks `key` committed for `retentionMilliseconds`, so that a server
/// stopping between its commit and keeping the answer never leaves the write to be made twice.
package struct IdempotencyHold: Sendable, Equatable {
    package var key: [UInt8]
    package var claim: [UInt8]
    /// What the key holds once the write has committed, until its answer replaces it.
    package var committed: [UInt8]
    package var retentionMilliseconds: Int

    package init(key: [UInt8], claim: [UInt8], committed: [UInt8], retentionMilliseconds: Int) {
        self.key = key
        self.claim = claim
        self.committed = committed
        self.retentionMilliseconds = retentionMilliseconds
    }

    /// The hold of the write this thread runs now. Bound by `IdempotentWrites` around the
    /// write and read by the shared store's commit below it, as a trace context would be:
    /// threading it through every store call would add a parameter to each for one storage's
    /// sake. Requests run on one thread each, so the binding never crosses to another request.
    @TaskLocal package static var current: IdempotencyHold?
}

/// Where writes' keys and first answers are kept: in this process for the memory store, in
/// Redis beside the sessions for the Redis store, so that a retry reaching another replica is
/// answered the same. Keys are per tenant: one tenant's keys never answer another's writes.
/// `session` is the store id of the session the write is about, for a ledger that keeps the
/// key beside it (on a Redis Cluster, a commit and its key must share a slot).
package protocol IdempotencyLedger: Sendable {
    /// Claims `key` of `tenant` for a request with `fingerprint`, or says who has it.
    func claim(tenant: String, key: String, session: String?, fingerprint: Fingerprint) throws(APIError) -> IdempotencyClaim
    /// Keeps the claimed request's answer for the retention time.
    func record(tenant: String, key: String, session: String?, fingerprint: Fingerprint, answer: RecordedAnswer)
    /// Lets the key go: the request changed nothing (it was refused), so a retry runs anew.
    /// `hold` is the one its claim gave.
    func release(tenant: String, key: String, session: String?, fingerprint: Fingerprint, hold: IdempotencyHold?)
}

/// What identifies a write for its key: method, path, the condition and the body, hashed. Two
/// requests under one key with different fingerprints are two different writes.
package struct Fingerprint: Sendable, Hashable {
    package var high: UInt64
    package var low: UInt64

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// FNV-1a over the parts, twice with different offsets, each part followed by its length
    /// (so that no two splits of the same bytes hash alike).
    private struct Hasher {
        var high: UInt64 = 0xcbf2_9ce4_8422_2325
        var low: UInt64 = 0x8422_2325_cbf2_9ce4

        mutating func mix(_ byte: UInt8) {
            high = (high ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            low = (low ^ UInt64(byte &+ 0x5B)) &* 0x0000_0100_0000_01B3
        }

        mutating func part(_ bytes: some Sequence<UInt8>) {
            var count: UInt64 = 0
            for byte in bytes {
                mix(byte)
                count += 1
            }
            withUnsafeBytes(of: count.littleEndian) { for byte in $0 { mix(byte) } }
        }
    }

    /// The parts, each hashed with its length.
    init(parts: [[UInt8]]) {
        var hasher = Hasher()
        for part in parts { hasher.part(part) }
        self.init(high: hasher.high, low: hasher.low)
    }

    /// The request's method, path, query, condition, content type and body.
    init(of request: HTTPRequest) {
        var hasher = Hasher()
        hasher.part(request.method.utf8)
        hasher.part(request.path.utf8)
        for (name, value) in request.query {
            hasher.part(name.utf8)
            hasher.part(value.utf8)
        }
        hasher.part((request.header("If-Match") ?? "").utf8)
        hasher.part((request.header("Content-Type") ?? "").utf8)
        hasher.part(request.body.bytes)
        self.init(high: hasher.high, low: hasher.low)
    }

    package var hex: String {
        func digits(_ value: UInt64) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return digits(high) + digits(low)
    }

    package init?(hex: Substring) {
        guard hex.utf8.count == 32, let high = UInt64(hex.prefix(16), radix: 16), let low = UInt64(hex.suffix(16), radix: 16) else { return nil }
        self.init(high: high, low: low)
    }
}
