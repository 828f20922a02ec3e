/// Some of a list's items, numbered from 0: what a delta's formats read as its old and new
/// rows. A window's rows are read where the session keeps them, not copied: a fan-out spells
/// thousands of window deltas a commit, each of which reads a row or two of its window, and a
/// copy of both windows' 50 rows each (4 KB, read cold from a long list) was a fifth of the
/// time each took.
struct ItemRows: RandomAccessCollection {
    private let items: [JSONItem]
    private let first: Int
    let endIndex: Int

    var startIndex: Int { 0 }

    /// The whole list.
    init(_ items: [JSONItem]) {
        self.init(items, 0..<items.count)
    }

    /// `items[rows]`, numbered from 0.
    init(_ items: [JSONItem], _ rows: Range<Int>) {
        precondition(rows.lowerBound >= 0 && rows.upperBound <= items.count, "rows outside the list")
        self.items = items
        first = rows.lowerBound
        endIndex = rows.count
    }

    subscript(position: Int) -> JSONItem {
        precondition(position >= 0 && position < endIndex, "row outside the rows")
        return items[first + position]
    }
}
