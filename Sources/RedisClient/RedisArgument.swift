/// One argument of a Redis command.
package enum RedisArgument {
    /// Bytes of its own.
    case bytes([UInt8])
    /// Text lent in pieces, sent one after another as one argument without being copied into
    /// one buffer first. The memory must stay valid until the `run` it is passed to returns.
    case borrowed([UnsafeRawBufferPointer])
}

extension RedisArgument: ExpressibleByStringLiteral {
    package init(stringLiteral text: String) { self = .bytes(Array(text.utf8)) }

    package static func text(_ text: String) -> RedisArgument { .bytes(Array(text.utf8)) }
}
