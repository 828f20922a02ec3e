import Synchronization

/// What reading one request body may cost: how deep its JSON nests, how many items it holds,
/// and its share of the items that all requests together may hold in memory at once.
package struct ReadLimits: Sendable {
    /// Deeper nesting, anywhere in the body, is a 400.
    package var maxDepth = 512
    /// Items in one body, all its collections together; more is a 413 `too_many_items`.
    package var maxItems = 2_000_000
    /// Shared by all requests; none, no server-wide bound.
    package var budget: ItemBudget?

    package init(maxDepth: Int = 512, maxItems: Int = 2_000_000, budget: ItemBudget? = nil) {
        self.maxDepth = maxDepth
        self.maxItems = maxItems
        self.budget = budget
    }
}

/// Items read from request bodies and not yet answered, by all requests together. Each item
/// costs a bounded number of bytes while its request is computed (its record, the engine's
/// tables, its part of the answer), so bounding items bounds the memory that bodies make the
/// server use, beyond the bodies themselves.
package final class ItemBudget: Sendable {
    package let limit: Int
    private let used = Atomic<Int>(0)

    package init(limit: Int) {
        self.limit = limit
    }

    package var inUse: Int { used.load(ordering: .relaxed) }

    /// Takes `count` items from the budget if they fit.
    func take(_ count: Int) -> Bool {
        let total = used.add(count, ordering: .relaxed).newValue
        guard total <= limit else {
            used.subtract(count, ordering: .relaxed)
            return false
        }
        return true
    }

    func give(_ count: Int) { used.subtract(count, ordering: .relaxed) }
}

/// One request's share of the budget, taken in blocks as items are read and given back when
/// the request is done with them (when the lease goes).
final class ItemLease {
    private let budget: ItemBudget?
    private let maxItems: Int
    private var held = 0
    /// Items are taken from the budget this many at a time, not one by one.
    static let block = 16_384

    init(_ limits: ReadLimits) {
        budget = limits.budget
        maxItems = limits.maxItems
    }

    deinit { budget?.give(held) }

    var items: Int { held }

    /// Makes room for the item that would be the `count + 1`-th read.
    @inline(__always)
    func admit(_ count: Int) throws(APIError) {
        guard count >= held else { return }
        guard count < maxItems else {
            throw APIError(
                .tooManyItems,
                message:
                    "a request holds at most \(maxItems) items, all its collections together (--max-items-per-request, LIVEDELTA_MAX_ITEMS_PER_REQUEST); send fewer at once"
            )
        }
        let more = min(Self.block, maxItems - held)
        if let budget, !budget.take(more) { throw .itemBudgetFull }
        held += more
    }
}

extension APIError {
    static var itemBudgetFull: APIError {
        var error = APIError(
            .serverBusy,
            message:
                "the server holds as many items from requests as it may at once (--max-items-in-flight, LIVEDELTA_MAX_ITEMS_IN_FLIGHT); try again shortly"
        )
        error.headers = [("Retry-After", "1")]
        return error
    }
}
