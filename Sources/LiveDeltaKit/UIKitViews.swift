// UIKit's list views as BatchUpdatable: a few forwarding lines each. The adapter's logic is in
// BatchUpdates.swift and DiffableSnapshots.swift, where it runs (and is tested) on every platform.
#if canImport(UIKit) && !os(watchOS)
    import UIKit
#elseif TRANSCRIBED_UIKIT
    // Linux has no UIKit: Tests/UIKitAdapterTests compiles this file against UIKit's
    // declarations transcribed from Apple's documentation (Tests/AppleSDK/UIKitTranscribed).
    import LiveDeltaKit
    import UIKitTranscribed
#endif

#if (canImport(UIKit) && !os(watchOS)) || TRANSCRIBED_UIKIT

    extension UICollectionView: BatchUpdatable {
        /// Runs the updates as one animated batch.
        public func performBatch(_ updates: @escaping () -> Void) { performBatchUpdates(updates, completion: nil) }
        // deleteSections, insertSections, moveSection(_:toSection:), reloadSections,
        // deleteItems(at:), insertItems(at:), moveItem(at:to:), reloadItems(at:),
        // reconfigureItems(at:) and reloadData() are UICollectionView's own.
    }

    extension UITableView: BatchUpdatable {
        /// Runs the updates as one animated batch.
        public func performBatch(_ updates: @escaping () -> Void) { performBatchUpdates(updates, completion: nil) }
        /// Deletes these sections (before the batch), animated.
        public func deleteSections(_ sections: IndexSet) { deleteSections(sections, with: .automatic) }
        /// Inserts sections at these indexes (after the batch), animated.
        public func insertSections(_ sections: IndexSet) { insertSections(sections, with: .automatic) }
        /// Reloads these sections, animated.
        public func reloadSections(_ sections: IndexSet) { reloadSections(sections, with: .automatic) }
        /// Deletes the rows at these index paths (before the batch), animated.
        public func deleteItems(at indexPaths: [IndexPath]) { deleteRows(at: indexPaths, with: .automatic) }
        /// Inserts rows at these index paths (after the batch), animated.
        public func insertItems(at indexPaths: [IndexPath]) { insertRows(at: indexPaths, with: .automatic) }
        /// Moves a row.
        public func moveItem(at indexPath: IndexPath, to newIndexPath: IndexPath) { moveRow(at: indexPath, to: newIndexPath) }
        /// Reloads the rows at these index paths, animated.
        public func reloadItems(at indexPaths: [IndexPath]) { reloadRows(at: indexPaths, with: .automatic) }
        /// Has the rows at these index paths show their items again, keeping the cells.
        public func reconfigureItems(at indexPaths: [IndexPath]) { reconfigureRows(at: indexPaths) }
        // moveSection(_:toSection:) and reloadData() are UITableView's own.
    }

    /// `LiveList.snapshot` builds one of these; its members are the snapshot's own.
    extension NSDiffableDataSourceSnapshot: DiffableSnapshot {}
#endif
