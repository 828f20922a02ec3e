/// Why a token was refused. For the log only: an answer says no more than `invalid_token`,
/// so that a caller cannot learn which check to work around.
public struct TokenRejection: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}
