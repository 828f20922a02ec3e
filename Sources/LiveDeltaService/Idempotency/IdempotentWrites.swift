import MicroHTTP

/// Writes made safe to retry by an `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header):
/// the first request with a key runs and its answer is kept; a retry with the same key and the
/// same request gets that answer again (with `Idempotent-Replayed: true`) and changes nothing;
/// the same key with another request is a 422; a retry while the first still runs waits for it,
/// then gets a 409 if it is still running. A refused first request (any answer but a 2xx)
/// changed nothing, so its key is let go and a retry runs anew. Without the header nothing
/// changes.
struct IdempotentWrites: Sendable {
    let ledger: any IdempotencyLedger
    /// First answers with a larger body are kept as `RecordedAnswer.notKept`.
    let maxAnswerBytes: Int
    /// How long a retry waits for the first request with its key to finish.
    var patience: Duration = .seconds(10)
    /// Wakes a retry waiting here when a first request finishes in this process.
    let finishes = FinishSignal()
    /// How long a retry waits at most before it asks the ledger again, for a first request on
    /// another replica (which cannot wake it): its waits double from 5 ms up to this.
    static let longestRecheck: Duration = .milliseconds(50)

    /// Runs `write` with `hold` bound for the shared store's commit below it.
    private static func run(_ write: () throws(APIError) -> HTTPResponse, holding hold: IdempotencyHold?) throws(APIError) -> HTTPResponse {
        guard let hold else { return try write() }
        // `withValue` rethrows untyped: the answer comes out as a `Result`, so the error keeps
        // its type.
        let answer = IdempotencyHold.$current.withValue(hold) { Result { () throws(APIError) in try write() } }
        return try answer.get()
    }

    /// The key a request names, nil where it names none. Two `Idempotency-Key` fields are
    /// refused rather than one picked: a proxy and a client may each have added one, and
    /// whichever the server took, the other's retries would not match it.
    static func key(in request: HTTPRequest) throws(APIError) -> String? {
        let values = request.headerValues("Idempotency-Key")
        guard let first = values.first else { return nil }
        guard values.count == 1 else {
            throw invalid("the request has \(values.count) Idempotency-Key fields; send one")
        }
        return try key(first)
    }

    /// The key a header value names: a structured-field string (`"k"`, RFC 8941) or, as many
    /// clients send it, the bare key; 1 to 255 visible ASCII characters.
    static func key(_ value: String) throws(APIError) -> String {
        var text = Substring(value).trimmingSpaces
        if text.first == "\"" {
            guard text.count >= 2, text.last == "\"" else { throw invalid("its quotes are not closed") }
            text = text.dropFirst().dropLast()
            // RFC 8941 strings escape only `"` and `\`.
            var unescaped = ""
            var escaping = false
            for character in text {
                if escaping {
                    guard character == "\"" || character == "\\" else { throw invalid("\\ escapes only \" and \\ in a string") }
                    unescaped.append(character)
                    escaping = false
                } else if character == "\\" {
                    escaping = true
                } else if character == "\"" {
                    throw invalid("a \" inside the key must be escaped")
                } else {
                    unescaped.append(character)
                }
            }
            guard !escaping else { throw invalid("it ends in a lone \\") }
            text = Substring(unescaped)
        }
        guard (1...255).contains(text.utf8.count) else { throw invalid("it must hold 1 to 255 characters") }
        guard text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { throw invalid("it must be visible ASCII characters") }
        return String(text)
    }

    private static func invalid(_ reason: String) -> APIError {
        APIError(
            .invalidIdempotencyKey,
            message: "the Idempotency-Key cannot be read: \(reason); send a unique string, such as a UUID, as \"key\" or bare")
    }

    /// Runs `write` once for `key` of `tenant`, or answers as the first request with it did.
    /// `session`: the store id of the session it writes.
    func perform(
        _ request: HTTPRequest, tenant: String, key: String, session: String?, _ write: () throws(APIError) -> HTTPResponse
    ) throws(APIError) -> HTTPResponse {
        let fingerprint = Fingerprint(of: request)
        let deadline = ContinuousClock.now + patience
        var recheck: Duration = .milliseconds(5)
        while true {
            let seen = finishes.count
            let claim = try ledger.claim(tenant: tenant, key: key, session: session, fingerprint: fingerprint)
            switch claim {
            case .claimed(let hold):
                // Once its answer is kept or its key let go, a retry waiting here looks again.
                defer { finishes.finished() }
                let response: HTTPResponse
                do {
                    response = try Self.run(write, holding: hold)
                } catch {
                    ledger.release(tenant: tenant, key: key, session: session, fingerprint: fingerprint, hold: hold)
                    throw error
                }
                if (200..<300).contains(response.status) && response.stream == nil {
                    let answer = RecordedAnswer(response)
                    ledger.record(
                        tenant: tenant, key: key, session: session, fingerprint: fingerprint,
                        answer: answer.body.count <= maxAnswerBytes ? answer : .notKept(answer, limit: maxAnswerBytes))
                } else {
                    ledger.release(tenant: tenant, key: key, session: session, fingerprint: fingerprint, hold: hold)
                }
                return response
            case .answered(let answer):
                return answer.response
            case .reused:
                throw APIError(
                    .idempotencyKeyReused,
                    message:
                        "this Idempotency-Key was used for another request (another body, path or If-Match); send a new key with each new write")
            case .running, .unanswered:
                // The first request is usually a few milliseconds from done (or, committed, from
                // keeping its answer), and session writes run on the waiting threads, which may
                // wait: until it finishes here, or for a while before asking the ledger again.
                let now = ContinuousClock.now
                guard now < deadline else { throw Self.unfinished(claim) }
                finishes.wait(after: seen, for: min(recheck, deadline - now))
                recheck = min(recheck * 2, Self.longestRecheck)
            }
        }
    }

    /// What a retry is told when the first request with its key is still unfinished at the
    /// deadline: running (its server may have stopped), or committed with its answer lost.
    private static func unfinished(_ claim: IdempotencyClaim) -> APIError {
        guard claim == .running else {
            return APIError(
                .idempotencyAnswerLost,
                message:
                    "the first request with this Idempotency-Key took effect, but its server stopped before keeping its answer; read the session to see its state now, and send a new key with a new write"
            )
        }
        var error = APIError(
            .idempotencyKeyInUse,
            message:
                "the first request with this Idempotency-Key has not finished (its server may have stopped: with the Redis store its claim lapses after a minute, and a retry then runs); wait and retry, or read the session to see whether it took effect"
        )
        error.headers = [("Retry-After", "1")]
        return error
    }
}
