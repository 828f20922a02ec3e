/// Every error code the API answers with, each with its one status: the catalogue that
/// openapi.yaml's `Error.error.code` enum and the README's error table are checked against.
package enum ErrorCode: String, CaseIterable, Sendable {
    case malformedJSON = "malformed_json"
    case bodyTooLarge = "body_too_large"
    case unsupportedMediaType = "unsupported_media_type"
    case invalidShape = "invalid_shape"
    case invalidOption = "invalid_option"
    case missingID = "missing_id"
    case invalidID = "invalid_id"
    case invalidItem = "invalid_item"
    case duplicateID = "duplicate_id"
    case duplicateMember = "duplicate_member"
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    case sessionNotFound = "session_not_found"
    case versionMismatch = "version_mismatch"
    case invalidSessionID = "invalid_session_id"
    case invalidIfMatch = "invalid_if_match"
    case invalidIdempotencyKey = "invalid_idempotency_key"
    case idempotencyKeyReused = "idempotency_key_reused"
    case idempotencyKeyInUse = "idempotency_key_in_use"
    case idempotencyAnswerLost = "idempotency_answer_lost"
    case tooManyItems = "too_many_items"
    case tooManySessions = "too_many_sessions"
    case sessionTooLarge = "session_too_large"
    case busy = "busy"
    case serverBusy = "server_busy"
    case sessionStoreUnavailable = "session_store_unavailable"
    case outcomeUnknown = "outcome_unknown"
    case badRequest = "bad_request"
    case uriTooLong = "uri_too_long"
    case headersTooLarge = "headers_too_large"
    case unsupportedTransferCoding = "unsupported_transfer_coding"
    case requestTimeout = "request_timeout"
    case tooManyConnections = "too_many_connections"
    case tooManyConnectionsFromClient = "too_many_connections_from_client"
    case tooManySubscribers = "too_many_subscribers"
    case tooManyStreamOpens = "too_many_stream_opens"
    case quotaExceeded = "quota_exceeded"
    case invalidParameter = "invalid_parameter"
    case invalidOperation = "invalid_operation"
    case changeConflict = "change_conflict"
    case testFailed = "test_failed"
    case anchorNotFound = "anchor_not_found"
    case unknownSource = "unknown_source"
    case sourceFed = "source_fed"
    case sourceResultRefused = "source_result_refused"
    case sourceUnavailable = "source_unavailable"
    case invalidToken = "invalid_token"
    case insufficientScope = "insufficient_scope"
    case internalError = "internal_error"

    package var status: Int {
        switch self {
        case .malformedJSON, .invalidSessionID, .invalidIfMatch, .invalidIdempotencyKey, .badRequest, .invalidParameter: 400
        case .invalidToken: 401
        case .insufficientScope: 403
        case .notFound, .sessionNotFound: 404
        case .methodNotAllowed: 405
        case .requestTimeout: 408
        case .versionMismatch: 412
        case .bodyTooLarge, .tooManyItems, .sessionTooLarge: 413
        case .uriTooLong: 414
        case .unsupportedMediaType: 415
        case .changeConflict, .testFailed, .idempotencyKeyInUse, .idempotencyAnswerLost, .anchorNotFound, .sourceFed, .sourceResultRefused: 409
        case .invalidOperation, .invalidShape, .invalidOption, .missingID, .invalidID, .invalidItem, .duplicateID, .duplicateMember,
            .idempotencyKeyReused, .unknownSource:
            422
        case .tooManyConnectionsFromClient, .tooManyStreamOpens, .quotaExceeded: 429
        case .headersTooLarge: 431
        case .internalError: 500
        case .unsupportedTransferCoding: 501
        case .outcomeUnknown: 504
        case .tooManySessions, .busy, .serverBusy, .sessionStoreUnavailable, .tooManyConnections, .tooManySubscribers, .sourceUnavailable: 503
        }
    }
}
