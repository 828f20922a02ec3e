import ArgumentParser
import LiveDeltaService
import Logging
import MicroHTTP
import TokenAuth

/// Who may call what: the token flags, and the access policy they make.
struct AuthOptions: ParsableArguments {
    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case none
        case jwt
    }

    @Option(
        help:
            "none (anyone may call anything: for local development; logged at start, as a warning beyond loopback) or jwt (a bearer token on every request but /health, /ready, /openapi.yaml and the live page)."
    )
    var auth: Mode = .none

    @Option(
        help:
            "A file holding an HS256 secret (at least 32 bytes); repeat it to keep a previous secret working while tokens roll over."
    )
    var jwtSecretFile: [String] = []

    @Option(
        help: "A PEM public key: RS256 for RSA, ES256 for P-256, EdDSA for Ed25519; repeatable."
    )
    var jwtPublicKeyFile: [String] = []

    @Option(
        help:
            "A JWK Set (keys chosen by kid): a file, or an http(s) address such as an issuer's jwks_uri; read again every --jwks-refresh seconds, and on an unknown kid at most every 10 s."
    )
    var jwks: String = ""

    @Option(help: "Seconds between reads of the --jwks set.")
    var jwksRefresh: Int = 300

    @Option(
        help:
            "Seconds a token may live: exp - iat, and exp - now; longer-lived tokens are refused (0: no limit)."
    )
    var jwtMaxLifetime: Int = 86_400

    @Option(help: "Tokens' iss must equal it (unchecked when empty).")
    var jwtIssuer: String = ""

    @Option(help: "Tokens' aud must hold it (unchecked when empty).")
    var jwtAudience: String = ""

    @Option(help: "The claim naming a token's tenant, whose sessions it reaches.")
    var tenantClaim: String = "tenant"

    @Option(help: "The cookie a browser's event stream may carry its token in (live routes only).")
    var authCookie: String = "livedelta_token"

    @Option(
        help:
            "Web origins that may call the API from a browser: comma-separated origins (https://app.example.com), or * for any (never with cookies); empty: no CORS headers."
    )
    var corsOrigins: String = ""

    /// `--cors-origins` read (it was checked by `validate`).
    var cors: CORSPolicy { (try? CORSPolicy(parsing: corsOrigins)) ?? .off }

    func validate() throws {
        guard !EnvironmentArguments.readingValue.load(ordering: .relaxed) else { return }
        do {
            _ = try CORSPolicy(parsing: corsOrigins)
        } catch {
            throw ValidationError("--cors-origins: \(error.message)")
        }
        if auth == .none {
            guard jwtSecretFile.isEmpty, jwtPublicKeyFile.isEmpty, jwks.isEmpty else {
                throw ValidationError("keys are given but --auth is none: add --auth jwt")
            }
            return
        }
        guard !jwtSecretFile.isEmpty || !jwtPublicKeyFile.isEmpty || !jwks.isEmpty else {
            throw ValidationError("--auth jwt needs keys: --jwt-secret-file, --jwt-public-key-file or --jwks")
        }
        guard (10...86_400).contains(jwksRefresh) else { throw ValidationError("--jwks-refresh must be from 10 to 86400 seconds") }
        guard (0...31_536_000).contains(jwtMaxLifetime) else {
            throw ValidationError("--jwt-max-lifetime must be from 0 (no limit) to 31536000 seconds")
        }
        guard !tenantClaim.isEmpty, !authCookie.isEmpty else { throw ValidationError("--tenant-claim and --auth-cookie must not be empty") }
    }

    /// The policy, with every key read now: a key that cannot be read stops the start.
    func accessPolicy(logger: Logger, host: String) throws -> AccessPolicy {
        guard auth == .jwt else {
            let loopback = host == "127.0.0.1" || host == "::1" || host == "localhost"
            let message: Logger.Message =
                "authentication is off (--auth none): anyone who reaches this server may read, change and delete every session"
            if loopback { logger.notice(message) } else { logger.warning(message, metadata: ["host": "\(host)"]) }
            return .open
        }
        var keys: [VerificationKey] = []
        for path in jwtSecretFile { keys.append(try VerificationKey.secret(try KeyFile.read(path), origin: path)) }
        for path in jwtPublicKeyFile {
            keys.append(try VerificationKey.publicKey(pem: String(decoding: try KeyFile.read(path), as: UTF8.self), origin: path))
        }
        var policy = TokenVerifier.Policy()
        policy.issuer = jwtIssuer.isEmpty ? nil : jwtIssuer
        policy.audience = jwtAudience.isEmpty ? nil : jwtAudience
        policy.tenantClaim = tenantClaim
        policy.keySetRefreshSeconds = Int64(jwksRefresh)
        policy.maxLifetimeSeconds = jwtMaxLifetime > 0 ? Int64(jwtMaxLifetime) : nil
        var keySet: TokenVerifier.KeySetRefresh?
        var keySetThread: ThreadPool?
        var firstSet: [VerificationKey] = []
        if !jwks.isEmpty {
            let jwks = jwks
            let source: TokenVerifier.KeySetSource = { () throws(KeyError) in
                do throws(KeyError) {
                    let bytes = KeySetAddress.isAddress(jwks) ? try KeySetAddress.fetch(jwks) : try KeyFile.read(jwks)
                    let keys = try VerificationKey.keySet(json: bytes, origin: jwks)
                    logger.info("key set read", metadata: ["jwks": "\(jwks)", "keys": .stringConvertible(keys.count)])
                    return keys
                } catch {
                    logger.error("key set unreadable; the keys read before stay", metadata: ["error": "\(error)"])
                    throw error
                }
            }
            firstSet = try source()
            let thread = AccessPolicy.keySetThread()
            keySet = TokenVerifier.KeySetRefresh(read: source, run: { thread.run($0) })
            keySetThread = thread
        }
        let verifier = TokenVerifier(keys: keys, keySet: keySet, policy: policy, now: AccessPolicy.unixNow())
        verifier.useKeySet(firstSet)
        logger.notice(
            "tokens checked (--auth jwt)",
            metadata: [
                "keys":
                    "\((keys + firstSet).map { "\($0.algorithm)\($0.kid.map { " kid=\($0)" } ?? "") from \($0.origin)" }.joined(separator: "; "))",
                "issuer": "\(jwtIssuer.isEmpty ? "any" : jwtIssuer)", "audience": "\(jwtAudience.isEmpty ? "any" : jwtAudience)",
                "tenant_claim": "\(tenantClaim)",
            ])
        return AccessPolicy(verifier: verifier, keySetThread: keySetThread, cookieName: authCookie)
    }
}
