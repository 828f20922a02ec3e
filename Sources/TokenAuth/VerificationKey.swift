import Dispatch
import ExtrasBase64
import JWTKit
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A key that tokens may be signed with, bound to the one algorithm it verifies: a token
/// naming another algorithm is never checked with it, so an RSA public key can never be
/// taken for an HMAC secret, and `alg: none` matches no key at all.
public struct VerificationKey: Sendable {
    /// The `kid` tokens name it by; nil for keys from files, which are tried in turn.
    public let kid: String?
    /// The JWS algorithm (`HS256`, `RS256`, `ES256`, `EdDSA`).
    public let algorithm: String
    /// Where it came from, for logs.
    public let origin: String
    /// The signature check itself, jwt-kit's.
    let check: any JWTAlgorithm

    /// Whether `signature` signs `input` by this key.
    func verifies(_ signature: [UInt8], signs input: ArraySlice<UInt8>) -> Bool {
        (try? check.verify(signature, signs: input)) ?? false
    }
}

/// Why keys could not be read: said at start, where the operator can fix it.
public struct KeyError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

extension VerificationKey {
    /// An HS256 secret, as the file holds it (a final line break is not part of it).
    public static func secret(_ bytes: [UInt8], origin: String) throws(KeyError) -> VerificationKey {
        var secret = bytes
        while let last = secret.last, last == 0x0A || last == 0x0D { secret.removeLast() }
        // RFC 7518 §3.2: a key of the same size as the hash output or larger.
        guard secret.count >= 32 else {
            throw KeyError(description: "\(origin): an HS256 secret must be at least 32 bytes (it has \(secret.count))")
        }
        let key = HMACKey(from: secret)
        return try extract(origin: origin, kid: nil, algorithm: "HS256") { await $0.add(hmac: key, digestAlgorithm: .sha256, kid: $1) }
    }

    /// A PEM public key: RS256 for RSA, ES256 for P-256, EdDSA for Ed25519, by the key's type.
    public static func publicKey(pem: String, origin: String) throws(KeyError) -> VerificationKey {
        if let key = try? ES256PublicKey(pem: pem) {
            return try extract(origin: origin, kid: nil, algorithm: "ES256") { await $0.add(ecdsa: key, kid: $1) }
        }
        if let key = try? EdDSA.PublicKey(pem: pem) {
            return try extract(origin: origin, kid: nil, algorithm: "EdDSA") { await $0.add(eddsa: key, kid: $1) }
        }
        if let key = try? Insecure.RSA.PublicKey(pem: pem) {
            return try extract(origin: origin, kid: nil, algorithm: "RS256") { await $0.add(rsa: key, digestAlgorithm: .sha256, kid: $1) }
        }
        throw KeyError(description: "\(origin): not a PEM public key of RSA, P-256 (ES256) or Ed25519 (EdDSA)")
    }

    /// The keys of a JWK Set (RFC 7517): each needs a `kid`; its algorithm is its `alg`, or
    /// follows from its type and curve where it has none.
    public static func keySet(json: [UInt8], origin: String) throws(KeyError) -> [VerificationKey] {
        let set: JWKS
        do {
            set = try JSONDecoder().decode(JWKS.self, from: Data(json))
        } catch {
            throw KeyError(description: "\(origin): not a JWK Set (\(error))")
        }
        var keys: [VerificationKey] = []
        for jwk in set.keys {
            guard let kid = jwk.keyIdentifier?.string else {
                throw KeyError(description: "\(origin): every key of the set needs a kid")
            }
            guard let algorithm = jwk.algorithm?.rawValue ?? inferredAlgorithm(jwk) else {
                throw KeyError(description: "\(origin): the key \(kid) has no alg, and its type does not say one")
            }
            guard algorithm != "none" else { throw KeyError(description: "\(origin): the key \(kid) names alg none") }
            keys.append(try extract(origin: origin, kid: kid, algorithm: algorithm) { collection, _ in try await collection.add(jwk: jwk) })
        }
        return keys
    }

    private static func inferredAlgorithm(_ jwk: JWK) -> String? {
        switch (jwk.keyType, jwk.curve?.rawValue) {
        case (.rsa, _): "RS256"
        case (.ecdsa, "P-256"): "ES256"
        case (.ecdsa, "P-384"): "ES384"
        case (.ecdsa, "P-521"): "ES512"
        case (.octetKeyPair, "Ed25519"): "EdDSA"
        default: nil
        }
    }

    /// jwt-kit makes its algorithms inside its key collection (an actor); the key is added to
    /// a collection of its own and its algorithm taken out once, so that checking a token
    /// later is a plain call on any thread.
    private static func extract(
        origin: String, kid: String?, algorithm: String,
        adding: @escaping @Sendable (JWTKeyCollection, JWKIdentifier) async throws -> Void
    ) throws(KeyError) -> VerificationKey {
        let found = Mutex<Result<any JWTAlgorithm, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let collection = JWTKeyCollection()
                let identifier = JWKIdentifier(string: kid ?? "key")
                try await adding(collection, identifier)
                let check = try await collection.getKey(for: identifier, alg: algorithm)
                found.withLock { $0 = .success(check) }
            } catch {
                found.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        switch found.withLock({ $0 }) {
        case .success(let check) where check.name == algorithm:
            return VerificationKey(kid: kid, algorithm: algorithm, origin: origin, check: check)
        case .success(let check):
            throw KeyError(description: "\(origin): the key \(kid ?? "") is for \(check.name), not \(algorithm)")
        case .failure(let error):
            throw KeyError(description: "\(origin): the key \(kid ?? "") cannot verify \(algorithm) (\(error))")
        case nil:
            throw KeyError(description: "\(origin): the key could not be read")
        }
    }
}

/// RFC 4648 §5 (base64url, no padding), as JWS uses it.
func base64URLDecoded(_ text: ArraySlice<UInt8>) -> [UInt8]? {
    try? String(decoding: text, as: UTF8.self).base64decoded(options: [.base64UrlAlphabet, .omitPaddingCharacter])
}
