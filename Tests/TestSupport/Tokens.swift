import Foundation

/// An HS256 token signed with the secret in `secret` (as `--jwt-secret-file` reads it), for
/// `tenant` with `scope`, valid for an hour; signed by openssl, as a token issuer would.
public func hs256Token(secret: URL, tenant: String = "acme", scope: String) throws -> String {
    func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
    let exp = Int(Date().timeIntervalSince1970) + 3600
    let input =
        base64URL(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "."
        + base64URL(Data(#"{"tenant":"\#(tenant)","scope":"\#(scope)","exp":\#(exp)}"#.utf8))
    let openssl = Process()
    openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    let key = try String(contentsOf: secret, encoding: .utf8)
    openssl.arguments = ["dgst", "-sha256", "-hmac", key, "-binary"]
    let (stdin, stdout) = (Pipe(), Pipe())
    openssl.standardInput = stdin
    openssl.standardOutput = stdout
    try openssl.run()
    stdin.fileHandleForWriting.write(Data(input.utf8))
    try stdin.fileHandleForWriting.close()
    let signature = stdout.fileHandleForReading.readDataToEndOfFile()
    openssl.waitUntilExit()
    return input + "." + base64URL(signature)
}
