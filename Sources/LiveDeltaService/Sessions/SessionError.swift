import LiveCollections

/// Why a store refused a request, or could not serve it: each the routes answer with an HTTP
/// status and an error code (`SessionEndpoints.translate`).
package enum SessionError: Error, Sendable {
    case notFound(id: String)
    /// The condition named a version that is not the current one; `current` is nil where the
    /// session does not exist (any more).
    case versionMismatch(expected: VersionCondition, current: UInt64?)
    /// Items posted to a sectioned session, or sections to a flat one.
    case kindMismatch(sessionIsSectioned: Bool)
    case duplicate(DuplicateIdentifierError)
    case tooManyItems(limit: Int, count: Int)
    case storeFull(limit: Int)
    /// The session would hold more bytes than all sessions may hold together.
    case tooLarge(limit: Int, bytes: Int)
    /// The sessions in use hold all the bytes sessions may hold.
    case bytesFull(limit: Int)
    /// The session's tenant holds all the sessions (`bytes` false) or bytes one tenant may,
    /// none of them idle; other tenants' sessions are never evicted for it.
    case tenantFull(limit: Int, bytes: Bool)
    /// The session was replaced, with options that read items differently, while this request
    /// was being read; reading again with `options` will do.
    case optionsChanged(DiffOptions)
    /// Other replicas kept committing first, past the store's retries.
    case conflict
    /// The shared store cannot be reached, or did not answer in time; nothing was done.
    case storeUnavailable(String)
    /// A write was sent to the shared store and not answered: it may have taken effect, or
    /// may yet (a Redis paused past the timeout runs it when it resumes).
    case outcomeUnknown(String)
    /// A failure of the store's own (a 500, logged).
    case internalFailure(String)
    /// An edit refused the change (an operation does not fit the session): nothing was applied.
    case refused(APIError)
}
