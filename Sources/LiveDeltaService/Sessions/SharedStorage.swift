/// Storage under a shared session store: a session's bytes by id, read whole or just for its
/// version, and changed only by compare-and-set. It knows nothing of items, diffs or rules;
/// `SharedSessionStore` brings those (the same as the memory store's, `SessionRules`). Every
/// read refreshes the session's idle timeout. Failures are `SessionError.storeUnavailable`.
package protocol SharedStorage: Sendable {
    /// The version alone; `via` the staged data of the request asking, where it has some (the
    /// storage may answer on the same channel, after the staged write).
    func version(of id: String, via staged: (any StagedData)?) throws(SessionError) -> (version: UInt64, incarnation: String)?
    func read(_ id: String, via staged: (any StagedData)?) throws(SessionError) -> StoredSession?
    /// The session with each part's text apart, for a copy that logged steps take forward,
    /// without refreshing its idle timeout; nil where there is none, or it is stored whole.
    func readParts(_ id: String) throws(SessionError) -> PartedSession?
    /// The parts of a session that hold the units (items, or sections) `units(count)` asks for,
    /// `count` being all it holds, read without the others (a window of a long session); nil
    /// where there is no session, or it is stored whole or without what a window's answer
    /// needs (it is then read whole).
    func readUnits(_ id: String, _ units: (Int) -> Range<Int>) throws(SessionError) -> StoredUnits?
    /// The same for a window anchored by id: `needle` gives the hash of the anchor's id
    /// (`StoredUnit.stableIDHash`) for the session's shape and options, or nil where it has
    /// none; the parts whose units' id hashes (`PartPlan.writtenIDs`) hold it are read, and
    /// `place` answers, from one of them, the units the window wants, or nil where the anchor
    /// is not there; then the parts holding those are read.
    func readUnits(
        _ id: String, anchoredBy needle: (StoredShape, _ options: [UInt8]) -> UInt32?, _ place: (StoredUnits) -> Range<Int>?
    ) throws(SessionError) -> AnchoredUnits
    /// The options alone, without refreshing anything; nil where there is no session or no answer.
    func options(of id: String) -> [UInt8]?
    /// Writes a whole collection's parts, their text lent for the call, ahead of a commit, which
    /// may then be tried more than once. The storage may go on with the write while the caller
    /// works; every later call given the staged data comes after it.
    func stage(_ id: String, _ parts: PartPlan) throws(SessionError) -> any StagedData
    /// Ends what `stage` began: drops the bytes where no commit took them (failures are ignored:
    /// they expire anyway), and lets go of anything held for them.
    func finish(_ staged: any StagedData)
    /// Stores the session as `version`, `incarnation`, `options` and `data` where what is
    /// stored is still `expected`. Staged data stays staged where the commit did not happen.
    /// Parts that are not `whole` keep the stored parts they do not drop: they come only with
    /// an expected version, whose parts they were worked out from. `footprint` is what the
    /// session takes after the commit (`SessionFootprint`), counted against its tenant's bytes:
    /// the storage refuses a commit that would take the tenant past a quota
    /// (`SessionError.tenantFull`), in the same step as the compare-and-set (or, where the
    /// tenant's count cannot be in that step, counting the commit first and giving its room
    /// back where it did not happen).
    func commit(
        _ id: String, version: UInt64, incarnation: String, options: [UInt8], data: CommitData, expecting expected: StoredExpectation,
        step: StoredStep, footprint: Int
    ) throws(SessionError) -> CommitOutcome
    /// Deletes the session where it is at `version` (any, where nil).
    func delete(_ id: String, expectingVersion version: UInt64?) throws(SessionError) -> DeleteOutcome
    var isReady: Bool { get }

    // Live subscribers: every replica learns of every committed step of a followed session.

    /// Marks the session followed for a while, so that commits log their steps (on any
    /// replica) and announce them; called again while it is followed.
    func follow(_ ids: [String])
    /// Which of these sessions exist now (without refreshing their idle timeouts); nil where
    /// storage cannot be asked.
    func existing(_ ids: [String]) -> Set<String>?
    /// Makes every replica's listener read the session's log again, as after a commit.
    func announce(_ id: String)
    /// The steps logged after `cursor` (nil: all it keeps), oldest first.
    func steps(of id: String, after cursor: String?) throws(SessionError) -> [LoggedStep]
    /// The same for several sessions at once (in one round trip a node); nil for a session
    /// whose log could not be read.
    func steps(of logs: [(id: String, cursor: String?)]) -> [[LoggedStep]?]
    /// Starts hearing which sessions have new steps (`onStep`, with the id), and when hearing
    /// starts or starts again after a loss (`onListening`), until `stopListening`.
    /// `onListening` is told `true` where storage kept everything meanwhile, and only
    /// announcements may have been missed: the logs then hold all that was.
    func listen(onStep: @escaping @Sendable (String) -> Void, onListening: @escaping @Sendable (_ kept: Bool) -> Void)
    /// Stops hearing, and ends the thread that heard.
    func stopListening()
}

extension SharedStorage {
    package func readUnits(
        _ id: String, anchoredBy needle: (StoredShape, _ options: [UInt8]) -> UInt32?, _ place: (StoredUnits) -> Range<Int>?
    ) throws(SessionError) -> AnchoredUnits { .unanswered }
}

/// What a read of a window anchored by id found in storage.
package enum AnchoredUnits: Sendable {
    /// The parts that hold the window.
    case read(StoredUnits)
    /// Not answered from parts (no session, one stored whole, a part written without its ids'
    /// hashes, a session that kept changing, no part holding the anchor): read the session
    /// whole.
    case unanswered
}
