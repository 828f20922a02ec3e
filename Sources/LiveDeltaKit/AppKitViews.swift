// AppKit's list views as BatchUpdatable.
#if canImport(AppKit) && !targetEnvironment(macCatalyst)
    import AppKit
#elseif TRANSCRIBED_APPKIT
    // Linux has no AppKit: Tests/AppKitAdapterTests compiles this file against AppKit's
    // declarations transcribed from Apple's documentation (Tests/AppleSDK/AppKitTranscribed).
    import LiveDeltaKit
    import AppKitTranscribed
#endif

#if (canImport(AppKit) && !targetEnvironment(macCatalyst)) || TRANSCRIBED_APPKIT

    extension NSCollectionView: BatchUpdatable {
        /// Runs the updates as one animated batch.
        public func performBatch(_ updates: @escaping () -> Void) { performBatchUpdates(updates, completionHandler: nil) }
        /// Deletes the items at these index paths (before the batch).
        public func deleteItems(at indexPaths: [IndexPath]) { deleteItems(at: Set(indexPaths)) }
        /// Inserts items at these index paths (after the batch).
        public func insertItems(at indexPaths: [IndexPath]) { insertItems(at: Set(indexPaths)) }
        /// Reloads the items at these index paths.
        public func reloadItems(at indexPaths: [IndexPath]) { reloadItems(at: Set(indexPaths)) }
        // deleteSections, insertSections, moveSection(_:toSection:), reloadSections,
        // moveItem(at:to:) and reloadData() are NSCollectionView's own.
    }

    /// NSTableView applies row updates one at a time, each on the rows the last left (not as
    /// one batch with indices before and after), and has no sections: it shows each change by
    /// reloading, which the batch's data source already holds.
    extension NSTableView: BatchUpdatable {
        /// Switches the data source (the updates) and reloads.
        public func performBatch(_ updates: @escaping () -> Void) {
            updates()
            reloadData()
        }
        /// Nothing: the batch ends in a reload.
        public func deleteSections(_ sections: IndexSet) {}
        /// Nothing: the batch ends in a reload.
        public func insertSections(_ sections: IndexSet) {}
        /// Nothing: the batch ends in a reload.
        public func moveSection(_ section: Int, toSection newSection: Int) {}
        /// Nothing: the batch ends in a reload.
        public func reloadSections(_ sections: IndexSet) {}
        /// Nothing: the batch ends in a reload.
        public func deleteItems(at indexPaths: [IndexPath]) {}
        /// Nothing: the batch ends in a reload.
        public func insertItems(at indexPaths: [IndexPath]) {}
        /// Nothing: the batch ends in a reload.
        public func moveItem(at indexPath: IndexPath, to newIndexPath: IndexPath) {}
        /// Nothing: the batch ends in a reload.
        public func reloadItems(at indexPaths: [IndexPath]) {}
    }
#endif
