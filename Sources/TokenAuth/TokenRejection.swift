/// Why a token was refused. For the log only: an answer says no more than `invalid_token`,
/// so that a caller cannot learn which check to work around.
package struct TokenRejection: Error, Sendable, CustomStringConvertible {
    package let description: String

    init(_ description: String) { self.description = description }
}
