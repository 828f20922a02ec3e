import ByteJSON
import Dispatch
import JWTKit
import Synchronization

/// A key that tokens may be signed with, bound to the one algorithm it verifies: a token
/// naming another algorithm is never checked with it, so an RSA public key can never be
/// taken for an HMAC secret, and `alg: none` matches no key at all.
package struct VerificationKey: Sendable {
    /// The `kid` tokens name it by; nil for keys from files, which are tried in turn.
    package let kid: String?
    /// The JWS algorithm (`HS256`, `RS256`, `ES256`, `EdDSA`).
    package let algorithm: String
    /// Where it came from, for logs.
    package let origin: String
    /// The signature check itself, jwt-kit's.
    let check: any JWTAlgorithm

    /// Whether `signature` signs `input` by this key.
    func verifies(_ signature: [UInt8], signs input: ArraySlice<UInt8>) -> Bool {
        (try? check.verify(signature, signs: input)) ?? false
    }
}

/// Why keys could not be read: said at start, where the operator can fix it.
package struct KeyError: Error, CustomStringConvertible {
    package let description: String

    package init(description: String) { self.description = description }
}

extension VerificationKey {
    /// An HS256 secret, as the file holds it (a final line break is not part of it).
    package static func secret(_ bytes: [UInt8], origin: String) throws(KeyError) -> VerificationKey {
        var secret = bytes
        while let last = secret.last, last == 0x0A || last == 0x0D { secret.removeLast() }
        // RFC 7518 §3.2: a key of the same size as the hash output or larger.
        guard secret.count >= 32 else {
            throw KeyError(description: "\(origin): an HS256 secret must be at least 32 bytes (it has \(secret.count))")
        }
        let key = HMACKey(from: secret)
        return try extract(origin: origin, algorithm: "HS256") { await $0.add(hmac: key, digestAlgorithm: .sha256, kid: $1) }
    }

    /// A PEM public key: RS256 for RSA, ES256 for P-256, EdDSA for Ed25519, by the key's type.
    package static func publicKey(pem: String, origin: String) throws(KeyError) -> VerificationKey {
        if let key = try? ES256PublicKey(pem: pem) {
            return try extract(origin: origin, algorithm: "ES256") { await $0.add(ecdsa: key, kid: $1) }
        }
        if let key = try? EdDSA.PublicKey(pem: pem) {
            return try extract(origin: origin, algorithm: "EdDSA") { await $0.add(eddsa: key, kid: $1) }
        }
        if let key = try? Insecure.RSA.PublicKey(pem: pem) {
            return try extract(origin: origin, algorithm: "RS256") { await $0.add(rsa: key, digestAlgorithm: .sha256, kid: $1) }
        }
        throw KeyError(description: "\(origin): not a PEM public key of RSA, P-256 (ES256) or Ed25519 (EdDSA)")
    }

    /// The keys of a JWK Set (RFC 7517): each needs a `kid`; its algorithm is its `alg`, or
    /// follows from its type and curve where it has none. The set's members are read with
    /// ByteJSON; jwt-kit reads the key material.
    package static func keySet(json: [UInt8], origin: String) throws(KeyError) -> [VerificationKey] {
        let set = try? json.withUnsafeBufferPointer { bytes throws(JSONError) in try JSONValue(parsing: bytes, maxDepth: 16) }
        guard case .array(let members)? = set?["keys"] else {
            throw KeyError(description: "\(origin): not a JWK Set (no keys list)")
        }
        var wanted: [(kid: String?, algorithm: String)] = []
        for member in members {
            guard let kid = member["kid"]?.stringValue else {
                throw KeyError(description: "\(origin): every key of the set needs a kid")
            }
            guard let algorithm = member["alg"]?.stringValue ?? inferredAlgorithm(type: member["kty"]?.stringValue, curve: member["crv"]?.stringValue)
            else {
                throw KeyError(description: "\(origin): the key \(kid) has no alg, and its type does not say one")
            }
            guard algorithm != "none" else { throw KeyError(description: "\(origin): the key \(kid) names alg none") }
            wanted.append((kid, algorithm))
        }
        let text = String(decoding: json, as: UTF8.self)
        return try extract(origin: origin, wanted) { collection in try await collection.add(jwksJSON: text) }
    }

    private static func inferredAlgorithm(type: String?, curve: String?) -> String? {
        switch (type, curve) {
        case ("RSA", _): "RS256"
        case ("EC", "P-256"): "ES256"
        case ("EC", "P-384"): "ES384"
        case ("EC", "P-521"): "ES512"
        case ("OKP", "Ed25519"): "EdDSA"
        default: nil
        }
    }

    /// A key from a file: added to a collection under a name of its own, and taken out.
    private static func extract(
        origin: String, algorithm: String, adding: @escaping @Sendable (JWTKeyCollection, JWKIdentifier) async -> Void
    ) throws(KeyError) -> VerificationKey {
        let name = JWKIdentifier(string: "file")
        return try extract(origin: origin, [(nil, algorithm)], named: { _ in name }, adding: { await adding($0, name) })[0]
    }

    /// jwt-kit makes its algorithms inside its key collection (an actor); the keys are added
    /// to a collection of their own and each one's algorithm taken out once, so that checking
    /// a token later is a plain call on any thread.
    private static func extract(
        origin: String, _ wanted: [(kid: String?, algorithm: String)],
        named name: @escaping @Sendable (String?) -> JWKIdentifier = { JWKIdentifier(string: $0 ?? "") },
        adding: @escaping @Sendable (JWTKeyCollection) async throws -> Void
    ) throws(KeyError) -> [VerificationKey] {
        let found = Mutex<Result<[any JWTAlgorithm], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let collection = JWTKeyCollection()
                try await adding(collection)
                var checks: [any JWTAlgorithm] = []
                for (kid, algorithm) in wanted { checks.append(try await collection.getKey(for: name(kid), alg: algorithm)) }
                found.withLock { $0 = .success(checks) }
            } catch {
                found.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        switch found.withLock({ $0 }) {
        case .success(let checks):
            return try zip(wanted, checks).map { (wanted, check) throws(KeyError) in
                guard check.name == wanted.algorithm else {
                    throw KeyError(description: "\(origin): the key \(wanted.kid ?? "") is for \(check.name), not \(wanted.algorithm)")
                }
                return VerificationKey(kid: wanted.kid, algorithm: wanted.algorithm, origin: origin, check: check)
            }
        case .failure(let error):
            throw KeyError(description: "\(origin): the keys cannot be read (\(error))")
        case nil:
            throw KeyError(description: "\(origin): the keys could not be read")
        }
    }
}

/// RFC 4648 §5 (base64url) without padding, as JWS uses it (RFC 7515, 2), in its one canonical
/// spelling: nil for padding, any other character, a length no byte string has, or a last
/// character whose bits past the data are not zero. A decoder that took those would accept
/// several spellings of one token (a `=` appended, or another last character), each a
/// different string to a cache or a log.
func base64URLDecoded(_ text: ArraySlice<UInt8>) -> [UInt8]? {
    guard text.count % 4 != 1 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.count * 3 / 4)
    var bits: UInt32 = 0
    var held = 0
    for character in text {
        let value: UInt32
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(character - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "-"): value = 62
        case UInt8(ascii: "_"): value = 63
        default: return nil
        }
        bits = bits << 6 | value
        held += 6
        if held >= 8 {
            held -= 8
            bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(held)))
            bits &= (1 << UInt32(held)) - 1
        }
    }
    // What is left past the last whole byte is padding of the encoding: zero in its one spelling.
    return bits == 0 ? bytes : nil
}
