/// When an edit writes the session anew into one document. An edit that keeps the held items
/// adds its own items' text as a document of its own to those the session keeps (its owners);
/// past `maxDocuments` the edit writes the whole session anew into one instead. Rewriting costs
/// the list, so it should come seldom: a document's bookkeeping is small beside that. The one
/// rule for every edit, flat, sectioned or patch.
enum SessionRewrite {
    static let maxDocuments = 1_024

    /// Whether a session that would keep `documents` documents after the edit keeps its held
    /// items (false: the edit writes it anew).
    static func keepsHeld(documents: Int) -> Bool { documents <= maxDocuments }

    /// Whether an edit of a session whose items `owners` keep alive, adding one document of
    /// its own, keeps the held items.
    static func keepsHeld(adding owners: DocumentOwners) -> Bool { keepsHeld(documents: owners.count + 1) }
}
