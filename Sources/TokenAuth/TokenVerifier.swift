import ByteJSON

import struct NIOConcurrencyHelpers.NIOLockedValueBox

/// Checks bearer tokens (JWS compact JWTs, RFC 7519) against the configured keys and policy,
/// and remembers the ones it accepted until they expire, so that a client sending the same
/// token on every request pays for its signature once. A remembered token goes with the key
/// that verified it: a key dropped from the JWK Set refuses its tokens from the set's next read.
///
/// The signature is jwt-kit's to check; this reads the header and the claims (with ByteJSON,
/// as the service reads everything else) and decides.
package final class TokenVerifier: Sendable {
    package struct Policy: Sendable {
        /// `iss` must equal it, where set.
        package var issuer: String?
        /// `aud` (a string or a list) must hold it, where set.
        package var audience: String?
        /// The claim naming the tenant.
        package var tenantClaim = "tenant"
        /// Clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
        package var leewaySeconds: Int64 = 30
        /// The JWK Set is read again this often.
        package var keySetRefreshSeconds: Int64 = 300
        /// …and on a `kid` it does not hold, but not more often than this, so that a flood of
        /// unknown `kid`s cannot make it fetch in a loop.
        package var keySetFloorSeconds: Int64 = 10
        /// Accepted tokens remembered at once; 0 remembers none.
        package var cacheLimit = 10_000
        /// The longest a token may live: `exp - iat`, and `exp - now` (a token without `iat`
        /// cannot say when it was issued); nil for no limit. A leaked token then works for at
        /// most this long, whatever its issuer wrote.
        package var maxLifetimeSeconds: Int64? = 86_400

        package init() {}
    }

    /// Reads the JWK Set again (a file, or wherever it lives).
    package typealias KeySetSource = @Sendable () throws(KeyError) -> [VerificationKey]

    /// Where the JWK Set is read again from, and the thread a read runs on.
    package struct KeySetRefresh: Sendable {
        package let read: KeySetSource
        /// Runs a read off the request's thread (which may be an event loop's), on a thread
        /// the server owns and stops; false where that thread takes no job (it is stopping).
        package let run: @Sendable (@escaping @Sendable () -> Void) -> Bool

        package init(read: @escaping KeySetSource, run: @escaping @Sendable (@escaping @Sendable () -> Void) -> Bool) {
            self.read = read
            self.run = run
        }
    }

    package let policy: Policy
    private let fixedKeys: [VerificationKey]
    private let keySet: KeySetRefresh?
    private let state: NIOLockedValueBox<State>

    private struct State {
        var keySet: [VerificationKey] = []
        /// When the set was last read (or tried), seconds since 1970.
        var keySetRead: Int64 = .min
        var keySetReads = 0
        var reading = false
        var accepted: [String: Accepted] = [:]
    }

    /// A token remembered, with the set key that verified it (nil: a key from a file).
    private struct Accepted {
        var grant: TokenGrant
        var setKey: KeyName?
    }

    /// A JWK Set key as tokens name it.
    private struct KeyName: Hashable {
        var kid: String
        var algorithm: String

        init?(_ key: VerificationKey) {
            guard let kid = key.kid else { return nil }
            self.kid = kid
            algorithm = key.algorithm
        }
    }

    /// - Parameters:
    ///   - keys: keys from files (secrets and PEM public keys), and a first read of the set.
    ///   - keySet: where the JWK Set is read again from, and where; nil where there is none.
    package init(keys: [VerificationKey], keySet: KeySetRefresh? = nil, policy: Policy = Policy(), now: Int64) {
        fixedKeys = keys
        self.keySet = keySet
        self.policy = policy
        var initial = State()
        if keySet != nil { initial.keySetRead = now }
        state = NIOLockedValueBox(initial)
    }

    /// Times the JWK Set has been read since start (the first read not counted).
    package var keySetReads: Int { state.withLockedValue { $0.keySetReads } }

    /// Adds the set's keys as first read (at start, where failing to read it stops the server).
    package func useKeySet(_ keys: [VerificationKey]) {
        state.withLockedValue { Self.replaceKeySet(with: keys, in: &$0) }
    }

    /// The set's keys become `keys`, and tokens remembered for a key no longer in it are
    /// forgotten: checked again, they are refused.
    private static func replaceKeySet(with keys: [VerificationKey], in state: inout State) {
        state.keySet = keys
        let names = Set(keys.compactMap(KeyName.init))
        state.accepted = state.accepted.filter { _, accepted in accepted.setKey.map(names.contains) ?? true }
    }

    /// The token's grant, or why it is refused. `now`: seconds since 1970.
    package func verify(_ token: Substring, now: Int64) -> Result<TokenGrant, TokenRejection> {
        let text = String(token)
        // Before the remembered tokens are asked: a read of the set is what lets go of those
        // whose key it no longer holds.
        refreshKeySet(now: now, becauseOfUnknownKid: false)
        let cached = state.withLockedValue { $0.accepted[text] }
        if let cached, now <= cached.grant.expires + policy.leewaySeconds { return .success(cached.grant) }
        let result = check(Array(text.utf8), now: now)
        switch result {
        case .failure(let rejection): return .failure(rejection)
        case .success(let (grant, key)):
            if policy.cacheLimit > 0 { remember(text, Accepted(grant: grant, setKey: KeyName(key)), now: now) }
            return .success(grant)
        }
    }

    private func remember(_ token: String, _ accepted: Accepted, now: Int64) {
        state.withLockedValue { state in
            // A key dropped while its token was being checked: not remembered.
            if let setKey = accepted.setKey, !state.keySet.contains(where: { KeyName($0) == setKey }) { return }
            if state.accepted.count >= policy.cacheLimit {
                state.accepted = state.accepted.filter { now <= $0.value.grant.expires + policy.leewaySeconds }
                if state.accepted.count >= policy.cacheLimit / 2 { state.accepted.removeAll() }
            }
            state.accepted[token] = accepted
        }
    }

    // MARK: - Checking

    private func check(_ token: [UInt8], now: Int64) -> Result<(TokenGrant, VerificationKey), TokenRejection> {
        guard token.count <= 16 << 10 else { return .failure(TokenRejection("longer than 16 KiB")) }
        let parts = token.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(TokenRejection("not three dot-separated parts (JWS compact)")) }
        guard let headerBytes = base64URLDecoded(parts[0]), let header = Self.object(headerBytes) else {
            return .failure(TokenRejection("the header is not base64url JSON"))
        }
        guard let algorithm = header["alg"]?.stringValue else { return .failure(TokenRejection("the header has no alg")) }
        guard algorithm != "none" else { return .failure(TokenRejection("alg none")) }
        if header["crit"] != nil { return .failure(TokenRejection("the header names critical extensions")) }
        let kid: String?
        switch header["kid"] {
        case nil: kid = nil
        case .string(let bytes)?: kid = String(decoding: bytes, as: UTF8.self)
        default: return .failure(TokenRejection("kid is not a string"))
        }
        guard let signature = base64URLDecoded(parts[2]), !signature.isEmpty else {
            return .failure(TokenRejection("no signature"))
        }
        // A kid no key holds may be a key the set gained since it was read.
        // (Keys from files have no kid: only the set's can hold it.)
        if let kid, keySet != nil, !state.withLockedValue({ $0.keySet.contains { $0.kid == kid } }) {
            refreshKeySet(now: now, becauseOfUnknownKid: true)
        }
        let candidates = keys(for: algorithm, kid: kid)
        guard !candidates.isEmpty else {
            return .failure(TokenRejection("no key for alg \(algorithm)\(kid.map { " and kid \($0)" } ?? "")"))
        }
        let signingInput = token[..<(parts[1].endIndex)]
        guard let key = candidates.first(where: { $0.verifies(signature, signs: signingInput) }) else {
            return .failure(TokenRejection("the signature does not verify"))
        }
        guard let payloadBytes = base64URLDecoded(parts[1]), let claims = Self.object(payloadBytes) else {
            return .failure(TokenRejection("the payload is not base64url JSON"))
        }
        return grant(from: claims, now: now).map { ($0, key) }
    }

    /// Keys that may have signed a token with this header: those of its algorithm, and of its
    /// `kid` where it names one and a key has it (keys from files have none and stay in).
    private func keys(for algorithm: String, kid: String?) -> [VerificationKey] {
        let all = fixedKeys + state.withLockedValue { $0.keySet }
        let ofAlgorithm = all.filter { $0.algorithm == algorithm }
        guard let kid else { return ofAlgorithm }
        let named = ofAlgorithm.filter { $0.kid == kid }
        return named.isEmpty ? ofAlgorithm.filter { $0.kid == nil } : named
    }

    private func grant(from claims: JSONValue, now: Int64) -> Result<TokenGrant, TokenRejection> {
        let leeway = policy.leewaySeconds
        guard let expires = Self.seconds(claims["exp"]) else { return .failure(TokenRejection("no numeric exp")) }
        guard now <= expires + leeway else { return .failure(TokenRejection("expired at \(expires)")) }
        if claims["nbf"] != nil {
            guard let notBefore = Self.seconds(claims["nbf"]) else { return .failure(TokenRejection("nbf is not a number")) }
            guard notBefore <= now + leeway else { return .failure(TokenRejection("not valid before \(notBefore)")) }
        }
        if claims["iat"] != nil {
            guard let issued = Self.seconds(claims["iat"]) else { return .failure(TokenRejection("iat is not a number")) }
            guard issued <= now + leeway else { return .failure(TokenRejection("issued in the future (\(issued))")) }
            if let longest = policy.maxLifetimeSeconds, expires - issued > longest {
                return .failure(TokenRejection("lives \(expires - issued) s from iat to exp, past the \(longest) s allowed"))
            }
        }
        if let longest = policy.maxLifetimeSeconds, expires - now > longest + leeway {
            return .failure(TokenRejection("expires \(expires - now) s from now, past the \(longest) s a token may live"))
        }
        if let issuer = policy.issuer, claims["iss"]?.stringValue != issuer {
            return .failure(TokenRejection("iss is not \(issuer)"))
        }
        if let audience = policy.audience {
            let audiences: [String] =
                switch claims["aud"] {
                case .string?: [claims["aud"]?.stringValue ?? ""]
                case .array(let values)?: values.compactMap(\.stringValue)
                default: []
                }
            guard audiences.contains(audience) else { return .failure(TokenRejection("aud does not hold \(audience)")) }
        }
        guard let tenant = claims[policy.tenantClaim]?.stringValue else {
            return .failure(TokenRejection("no string \(policy.tenantClaim) claim"))
        }
        guard Self.isName(tenant) else {
            return .failure(TokenRejection("the tenant is not 1 to 128 of A-Z, a-z, 0-9, '.', '_' and '-'"))
        }
        var scopes = Set<String>()
        switch claims["scope"] {
        case nil: break
        case .string(let bytes)?: scopes = Set(bytes.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) })
        default: return .failure(TokenRejection("scope is not a string"))
        }
        var sessions: [String]?
        switch claims["sessions"] {
        case nil: break
        case .array(let values)?:
            let patterns = values.compactMap(\.stringValue)
            guard patterns.count == values.count else { return .failure(TokenRejection("sessions holds a non-string")) }
            sessions = patterns
        default: return .failure(TokenRejection("sessions is not a list"))
        }
        return .success(TokenGrant(tenant: tenant, scopes: scopes, sessions: sessions, expires: expires, subject: claims["sub"]?.stringValue))
    }

    /// Reads the JWK Set again where it is due: on the refresh interval, or for a `kid` not
    /// held once the floor has passed. One read at a time; everyone goes on with the keys held.
    private func refreshKeySet(now: Int64, becauseOfUnknownKid: Bool) {
        guard let keySet else { return }
        let due = state.withLockedValue { state -> Bool in
            guard !state.reading else { return false }
            let interval = becauseOfUnknownKid ? policy.keySetFloorSeconds : policy.keySetRefreshSeconds
            guard state.keySetRead == .min || now - state.keySetRead >= interval else { return false }
            state.reading = true
            state.keySetRead = now
            state.keySetReads += 1
            return true
        }
        guard due else { return }
        // Read off the request's thread: a slow issuer must not hold up other requests. This
        // request goes on with the keys held; those after the read see the new ones. A set
        // that cannot be read keeps the keys already held.
        let read = keySet.read
        let taken = keySet.run { [state] in
            let keys = try? read()
            state.withLockedValue { state in
                if let keys { Self.replaceKeySet(with: keys, in: &state) }
                state.reading = false
            }
        }
        if !taken { state.withLockedValue { $0.reading = false } }
    }

    // MARK: - Reading

    private static func object(_ bytes: [UInt8]) -> JSONValue? {
        let value = try? bytes.withUnsafeBufferPointer { buffer throws(JSONError) in try JSONValue(parsing: buffer, maxDepth: 16) }
        guard case .object? = value else { return nil }
        return value
    }

    /// A NumericDate (RFC 7519 §2), whole seconds (a fraction is dropped).
    private static func seconds(_ value: JSONValue?) -> Int64? {
        guard case .number(let number)? = value, let seconds = Double(number.description), seconds.isFinite,
            abs(seconds) < 1e15
        else { return nil }
        return Int64(seconds.rounded(.down))
    }

    /// A tenant is named as a session is: it becomes part of the sessions' keys.
    static func isName(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && text != "." && text != ".."
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E
                    || byte == 0x5F || byte == 0x2D
            }
    }
}
