// The part of UIKit that LiveDeltaKit's adapters (Sources/LiveDeltaKit/UIKitViews.swift) and
// the docs' UIKit snippets use, transcribed from Apple's documentation
// (developer.apple.com/documentation/uikit): the same names, argument labels, closure types,
// optionality, `open`/`public` and `@MainActor`. There is no Apple SDK on Linux; compiling the
// adapters and snippets against these declarations makes a renamed label, a wrong closure type
// or a call off the main actor fail `make test`. Each body only records the call, so tests can
// check what an adapter asked of the view.
@_exported import Foundation  // as the real framework does

// UIKit's own addition to Foundation's IndexPath (UIKit/NSIndexPath+UIKitAdditions).
extension IndexPath {
    /// An index path for an item (a collection view's) in a section.
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
    /// An index path for a row (a table view's) in a section.
    public init(row: Int, section: Int) { self.init(indexes: [section, row]) }
    public var section: Int { self[0] }
    public var item: Int { self[1] }
    public var row: Int { self[1] }
}

/// The calls a transcribed view was given, in order, for tests: `"deleteRows [0, 1] automatic"`.
@MainActor
public protocol RecordsCalls: AnyObject {
    var calls: [String] { get }
}

@MainActor
open class UIResponder: NSObject {}

@MainActor
open class UIView: UIResponder {
    open var bounds: CGRect = .zero
    open private(set) var subviews: [UIView] = []
    public override init() {}
    open func addSubview(_ view: UIView) { subviews.append(view) }
}

@MainActor
open class UIViewController: UIResponder {
    open var view: UIView! = UIView()
    public init(nibName nibNameOrNil: String?, bundle nibBundleOrNil: Bundle?) {}
    /// NSCoding's initializer, which a subclass with an initializer of its own must provide.
    public required init?(coder: NSCoder) {}
    open func viewDidLoad() {}
    open func viewWillAppear(_ animated: Bool) {}
    open func viewDidAppear(_ animated: Bool) {}
    open func viewWillDisappear(_ animated: Bool) {}
    open func viewDidDisappear(_ animated: Bool) {}
}

/// A view's content (UIContentConfiguration, iOS 14).
@MainActor
public protocol UIContentConfiguration {}

/// The content of a list cell (iOS 14): text, secondary text, image.
public struct UIListContentConfiguration: UIContentConfiguration, Hashable {
    public var text: String?
    public var secondaryText: String?
    public static func cell() -> UIListContentConfiguration { UIListContentConfiguration() }
    public static func header() -> UIListContentConfiguration { UIListContentConfiguration() }
}

// MARK: - UITableView

@MainActor
open class UITableViewCell: UIView {
    public enum CellStyle: Int, Sendable {
        case `default`, value1, value2, subtitle
    }
    public init(style: UITableViewCell.CellStyle, reuseIdentifier: String?) {}
    /// iOS 14.
    open var contentConfiguration: (any UIContentConfiguration)?
    /// iOS 14.
    open func defaultContentConfiguration() -> UIListContentConfiguration { UIListContentConfiguration() }
}

@MainActor
open class UITableView: UIView, RecordsCalls {
    public enum Style: Int, Sendable {
        case plain, grouped, insetGrouped
    }
    public enum RowAnimation: Int, Sendable {
        case fade, right, left, top, bottom, none, middle
        case automatic = 100
    }
    public private(set) var calls: [String] = []
    private var registered: [String: UITableViewCell.Type] = [:]
    func record(_ call: String) { calls.append(call) }

    public init(frame: CGRect, style: UITableView.Style) {}

    open func register(_ cellClass: AnyClass?, forCellReuseIdentifier identifier: String) {
        registered[identifier] = cellClass as? UITableViewCell.Type
    }
    open func dequeueReusableCell(withIdentifier identifier: String, for indexPath: IndexPath) -> UITableViewCell {
        // UIKit throws for an identifier never registered.
        precondition(registered[identifier] != nil, "unable to dequeue a cell with identifier \(identifier)")
        return UITableViewCell(style: .default, reuseIdentifier: identifier)
    }
    /// iOS 11.
    open func performBatchUpdates(_ updates: (() -> Void)?, completion: ((Bool) -> Void)? = nil) {
        record("performBatchUpdates")
        updates?()
        completion?(true)
    }
    open func insertSections(_ sections: IndexSet, with animation: UITableView.RowAnimation) {
        record("insertSections \(Array(sections)) \(animation)")
    }
    open func deleteSections(_ sections: IndexSet, with animation: UITableView.RowAnimation) {
        record("deleteSections \(Array(sections)) \(animation)")
    }
    open func reloadSections(_ sections: IndexSet, with animation: UITableView.RowAnimation) {
        record("reloadSections \(Array(sections)) \(animation)")
    }
    open func moveSection(_ section: Int, toSection newSection: Int) { record("moveSection \(section) \(newSection)") }
    open func insertRows(at indexPaths: [IndexPath], with animation: UITableView.RowAnimation) {
        record("insertRows \(indexPaths) \(animation)")
    }
    open func deleteRows(at indexPaths: [IndexPath], with animation: UITableView.RowAnimation) {
        record("deleteRows \(indexPaths) \(animation)")
    }
    open func reloadRows(at indexPaths: [IndexPath], with animation: UITableView.RowAnimation) {
        record("reloadRows \(indexPaths) \(animation)")
    }
    open func moveRow(at indexPath: IndexPath, to newIndexPath: IndexPath) { record("moveRow \(indexPath) \(newIndexPath)") }
    /// iOS 15.
    open func reconfigureRows(at indexPaths: [IndexPath]) { record("reconfigureRows \(indexPaths)") }
    open func reloadData() { record("reloadData") }
}

@MainActor
open class UITableViewController: UIViewController {
    open var tableView: UITableView! = UITableView(frame: .zero, style: .plain)
    public init(style: UITableView.Style) { super.init(nibName: nil, bundle: nil) }
    public required init?(coder: NSCoder) { super.init(coder: coder) }
    // UITableViewDataSource, which UITableViewController adopts.
    open func numberOfSections(in tableView: UITableView) -> Int { 1 }
    open func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int { 0 }
    open func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
        UITableViewCell(style: .default, reuseIdentifier: nil)
    }
    open func tableView(_ tableView: UITableView, titleForHeaderInSection section: Int) -> String? { nil }
}

// MARK: - UICollectionView

@MainActor
open class UICollectionViewLayout: NSObject {}

@MainActor
open class UICollectionViewCell: UIView {
    // UIKit makes cells by init(frame:); `required` lets the transcription make any Cell.
    public required override init() {}
    /// iOS 14.
    open var contentConfiguration: (any UIContentConfiguration)?
}

/// iOS 14.
@MainActor
open class UICollectionViewListCell: UICollectionViewCell {
    open func defaultContentConfiguration() -> UIListContentConfiguration { UIListContentConfiguration() }
}

/// iOS 14.
public struct UICollectionLayoutListConfiguration {
    public enum Appearance: Sendable {
        case plain, grouped, insetGrouped, sidebar, sidebarPlain
    }
    public init(appearance: UICollectionLayoutListConfiguration.Appearance) {}
}

/// iOS 13.
@MainActor
open class UICollectionViewCompositionalLayout: UICollectionViewLayout {
    /// iOS 14.
    open class func list(using configuration: UICollectionLayoutListConfiguration) -> UICollectionViewCompositionalLayout {
        UICollectionViewCompositionalLayout()
    }
}

@MainActor
open class UICollectionView: UIView, RecordsCalls {
    public private(set) var calls: [String] = []
    func record(_ call: String) { calls.append(call) }

    public init(frame: CGRect, collectionViewLayout layout: UICollectionViewLayout) {}

    /// iOS 14: a cell's registration with its configuration handler.
    public struct CellRegistration<Cell, Item> where Cell: UICollectionViewCell {
        public typealias Handler = (Cell, IndexPath, Item) -> Void
        let handler: Handler
        public init(handler: @escaping UICollectionView.CellRegistration<Cell, Item>.Handler) { self.handler = handler }
    }

    /// iOS 14.
    public func dequeueConfiguredReusableCell<Cell, Item>(
        using registration: UICollectionView.CellRegistration<Cell, Item>, for indexPath: IndexPath, item: Item?
    ) -> Cell where Cell: UICollectionViewCell {
        let cell = Cell()
        if let item { registration.handler(cell, indexPath, item) }
        return cell
    }
    open func performBatchUpdates(_ updates: (() -> Void)?, completion: ((Bool) -> Void)? = nil) {
        record("performBatchUpdates")
        updates?()
        completion?(true)
    }
    open func insertSections(_ sections: IndexSet) { record("insertSections \(Array(sections))") }
    open func deleteSections(_ sections: IndexSet) { record("deleteSections \(Array(sections))") }
    open func reloadSections(_ sections: IndexSet) { record("reloadSections \(Array(sections))") }
    open func moveSection(_ section: Int, toSection newSection: Int) { record("moveSection \(section) \(newSection)") }
    open func insertItems(at indexPaths: [IndexPath]) { record("insertItems \(indexPaths)") }
    open func deleteItems(at indexPaths: [IndexPath]) { record("deleteItems \(indexPaths)") }
    open func reloadItems(at indexPaths: [IndexPath]) { record("reloadItems \(indexPaths)") }
    open func moveItem(at indexPath: IndexPath, to newIndexPath: IndexPath) { record("moveItem \(indexPath) \(newIndexPath)") }
    /// iOS 15.
    open func reconfigureItems(at indexPaths: [IndexPath]) { record("reconfigureItems \(indexPaths)") }
    open func reloadData() { record("reloadData") }
}

@MainActor
open class UICollectionViewController: UIViewController {
    open var collectionView: UICollectionView!
    public init(collectionViewLayout layout: UICollectionViewLayout) {
        collectionView = UICollectionView(frame: .zero, collectionViewLayout: layout)
        super.init(nibName: nil, bundle: nil)
    }
    public required init?(coder: NSCoder) { super.init(coder: coder) }
    // UICollectionViewDataSource, which UICollectionViewController adopts.
    open func numberOfSections(in collectionView: UICollectionView) -> Int { 1 }
    open func collectionView(_ collectionView: UICollectionView, numberOfItemsInSection section: Int) -> Int { 0 }
    open func collectionView(_ collectionView: UICollectionView, cellForItemAt indexPath: IndexPath) -> UICollectionViewCell {
        UICollectionViewCell()
    }
}

// MARK: - Diffable data sources (iOS 13)

/// A snapshot of a diffable data source's sections and items, by identifier. UIKit stops the
/// app ("supplied identifiers are not unique", "invalid item identifier") where an identifier
/// repeats or an edit names one the snapshot does not hold; so does this transcription.
public struct NSDiffableDataSourceSnapshot<SectionIdentifierType, ItemIdentifierType>
where SectionIdentifierType: Hashable & Sendable, ItemIdentifierType: Hashable & Sendable {
    public private(set) var sectionIdentifiers: [SectionIdentifierType] = []
    private var items: [SectionIdentifierType: [ItemIdentifierType]] = [:]
    private var sectionOf: [ItemIdentifierType: SectionIdentifierType] = [:]
    /// Identifiers marked by `reloadItems` and by `reconfigureItems`, for tests.
    public private(set) var reloadedItemIdentifiers: [ItemIdentifierType] = []
    public private(set) var reconfiguredItemIdentifiers: [ItemIdentifierType] = []
    public private(set) var reloadedSectionIdentifiers: [SectionIdentifierType] = []

    public init() {}

    public var numberOfItems: Int { sectionOf.count }
    public var numberOfSections: Int { sectionIdentifiers.count }
    public var itemIdentifiers: [ItemIdentifierType] { sectionIdentifiers.flatMap { items[$0] ?? [] } }
    public func itemIdentifiers(inSection identifier: SectionIdentifierType) -> [ItemIdentifierType] { items[identifier] ?? [] }

    public mutating func appendSections(_ identifiers: [SectionIdentifierType]) {
        for identifier in identifiers {
            precondition(items[identifier] == nil, "supplied section identifiers are not unique: \(identifier)")
            sectionIdentifiers.append(identifier)
            items[identifier] = []
        }
    }
    public mutating func appendItems(_ identifiers: [ItemIdentifierType], toSection sectionIdentifier: SectionIdentifierType? = nil) {
        guard let section = sectionIdentifier ?? sectionIdentifiers.last else {
            preconditionFailure("there are currently no sections in the data source")
        }
        precondition(items[section] != nil, "invalid section identifier \(section)")
        for identifier in identifiers {
            precondition(sectionOf[identifier] == nil, "supplied item identifiers are not unique: \(identifier)")
            sectionOf[identifier] = section
            items[section]!.append(identifier)
        }
    }
    public mutating func reloadItems(_ identifiers: [ItemIdentifierType]) {
        for identifier in identifiers { precondition(sectionOf[identifier] != nil, "invalid item identifier \(identifier) for reload") }
        reloadedItemIdentifiers += identifiers
    }
    /// iOS 15.
    public mutating func reconfigureItems(_ identifiers: [ItemIdentifierType]) {
        for identifier in identifiers { precondition(sectionOf[identifier] != nil, "invalid item identifier \(identifier) for reconfigure") }
        reconfiguredItemIdentifiers += identifiers
    }
    public mutating func reloadSections(_ identifiers: [SectionIdentifierType]) {
        for identifier in identifiers { precondition(items[identifier] != nil, "invalid section identifier \(identifier) for reload") }
        reloadedSectionIdentifiers += identifiers
    }
}

@MainActor
open class UICollectionViewDiffableDataSource<SectionIdentifierType, ItemIdentifierType>: NSObject
where SectionIdentifierType: Hashable & Sendable, ItemIdentifierType: Hashable & Sendable {
    public typealias CellProvider = (UICollectionView, IndexPath, ItemIdentifierType) -> UICollectionViewCell?
    /// The snapshots applied, for tests.
    public private(set) var applied: [NSDiffableDataSourceSnapshot<SectionIdentifierType, ItemIdentifierType>] = []

    public init(
        collectionView: UICollectionView,
        cellProvider: @escaping UICollectionViewDiffableDataSource<SectionIdentifierType, ItemIdentifierType>.CellProvider
    ) {}

    open func apply(
        _ snapshot: NSDiffableDataSourceSnapshot<SectionIdentifierType, ItemIdentifierType>, animatingDifferences: Bool = true,
        completion: (() -> Void)? = nil
    ) {
        applied.append(snapshot)
        completion?()
    }
    /// iOS 15: shows the snapshot without working out differences, as `reloadData` would.
    open func applySnapshotUsingReloadData(
        _ snapshot: NSDiffableDataSourceSnapshot<SectionIdentifierType, ItemIdentifierType>, completion: (() -> Void)? = nil
    ) {
        applied.append(snapshot)
        completion?()
    }
    open func snapshot() -> NSDiffableDataSourceSnapshot<SectionIdentifierType, ItemIdentifierType> { applied.last ?? .init() }
}
