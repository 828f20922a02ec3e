import TokenAuth

/// Sessions live in their tenant's namespace: the stores key them by `tenant/id`, which no
/// id can spell (ids hold no `/`), so the same id in two tenants is two sessions, in memory
/// and in Redis alike. Answers show the id alone.
package enum SessionNamespace {
    /// The key the stores use for `id` as `grant`'s tenant sees it; the id itself where
    /// tokens are not checked.
    static func key(_ id: String, for grant: TokenGrant?) -> String {
        guard let grant else { return id }
        return grant.tenant + "/" + id
    }

    /// The tenant whose namespace a store key is in; nil where tokens are not checked (one
    /// namespace, no tenants).
    package static func tenant(of key: String) -> Substring? {
        guard let slash = key.lastIndex(of: "/") else { return nil }
        return key[..<slash]
    }

    /// The id a store key shows its tenant.
    static func shown(_ key: String) -> Substring {
        guard let slash = key.lastIndex(of: "/") else { return Substring(key) }
        return key[key.index(after: slash)...]
    }
}
