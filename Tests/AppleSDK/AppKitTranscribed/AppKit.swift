// The part of AppKit that LiveDeltaKit's adapters (Sources/LiveDeltaKit/AppKitViews.swift) use,
// transcribed from Apple's documentation (developer.apple.com/documentation/appkit): the same
// names, argument labels, closure types, `open` and `@MainActor`, so that compiling the adapters
// on Linux fails where they would not compile against AppKit. Each body records the call.
@_exported import Foundation  // as the real framework does

// AppKit's own addition to Foundation's IndexPath (NSIndexPath+NSCollectionView).
extension IndexPath {
    /// An index path for an item in a section.
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
    public var section: Int { self[0] }
    public var item: Int { self[1] }
}

@MainActor
open class NSResponder: NSObject {}

@MainActor
open class NSView: NSResponder {
    public init(frame frameRect: NSRect) {}
}

@MainActor
open class NSCollectionView: NSView {
    /// The calls given, in order, for tests.
    public private(set) var calls: [String] = []
    func record(_ call: String) { calls.append(call) }

    /// macOS 10.13.
    open func performBatchUpdates(_ updates: (() -> Void)?, completionHandler: ((Bool) -> Void)? = nil) {
        record("performBatchUpdates")
        updates?()
        completionHandler?(true)
    }
    open func insertSections(_ sections: IndexSet) { record("insertSections \(Array(sections))") }
    open func deleteSections(_ sections: IndexSet) { record("deleteSections \(Array(sections))") }
    open func reloadSections(_ sections: IndexSet) { record("reloadSections \(Array(sections))") }
    open func moveSection(_ section: Int, toSection newSection: Int) { record("moveSection \(section) \(newSection)") }
    open func insertItems(at indexPaths: Set<IndexPath>) { record("insertItems \(indexPaths.sorted())") }
    open func deleteItems(at indexPaths: Set<IndexPath>) { record("deleteItems \(indexPaths.sorted())") }
    open func reloadItems(at indexPaths: Set<IndexPath>) { record("reloadItems \(indexPaths.sorted())") }
    open func moveItem(at indexPath: IndexPath, to newIndexPath: IndexPath) { record("moveItem \(indexPath) \(newIndexPath)") }
    open func reloadData() { record("reloadData") }
}

@MainActor
open class NSTableView: NSView {
    /// The calls given, in order, for tests.
    public private(set) var calls: [String] = []

    open func reloadData() { calls.append("reloadData") }
    open func beginUpdates() { calls.append("beginUpdates") }
    open func endUpdates() { calls.append("endUpdates") }
}
