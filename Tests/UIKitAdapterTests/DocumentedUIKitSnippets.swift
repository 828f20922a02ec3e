import Foundation
import LiveDeltaKit
import UIKitTranscribed

// The docs' UIKit snippets, compiled against UIKit's transcribed declarations. Each block of the
// docs that imports UIKit is, but for its `import` lines, the text between a `// snippet:`
// marker and `// end` here (LiveDeltaKitTests' theDocumentedSnippetsAreTheCompiledOnes checks).

/// The docs' model.
struct Film: Codable, Sendable, Equatable {
    var id: Int
    var title: String
}

@MainActor
func documentedBatch(_ collectionView: UICollectionView, _ delta: Delta<Int>) {
    // snippet: batch-by-hand
    collectionView.performBatchUpdates {
        collectionView.deleteItems(at: delta.deletions.map { IndexPath(item: $0, section: 0) })
        collectionView.insertItems(at: delta.insertions.map { IndexPath(item: $0, section: 0) })
        for move in delta.moves {
            collectionView.moveItem(at: IndexPath(item: move.source, section: 0), to: IndexPath(item: move.target, section: 0))
        }
    } completion: { _ in
        collectionView.reloadItems(at: delta.reloads.map { IndexPath(item: $0.target, section: 0) })
    }
    // end
}

enum FlatFeed {
    // snippet: uikit-flat
    final class FeedViewController: UICollectionViewController {
        let list = LiveList<Film>()
        var shown: [Film] = []  // what the view shows: BatchUpdater switches it inside the batch
        var following: Task<Void, Never>?
        let cell = UICollectionView.CellRegistration<UICollectionViewListCell, Film> { cell, _, film in
            var content = cell.defaultContentConfiguration()
            content.text = film.title
            cell.contentConfiguration = content
        }

        init() {
            super.init(collectionViewLayout: UICollectionViewCompositionalLayout.list(using: UICollectionLayoutListConfiguration(appearance: .plain)))
        }
        required init?(coder: NSCoder) { fatalError("not from a storyboard") }

        override func viewDidLoad() {
            super.viewDidLoad()
            list.onChange = { [unowned self] change in
                switch change {
                case .reset:
                    shown = list.items
                    collectionView.reloadData()
                case .delta(let answer, let oldItems, _):
                    BatchUpdater.apply(answer, from: oldItems, to: list.items, on: collectionView, refresh: .reconfigure) { [unowned self] in
                        shown = $0
                    }
                case .window:
                    break  // a window's place changed, not its rows
                }
            }
        }

        override func viewDidAppear(_ animated: Bool) {
            super.viewDidAppear(animated)
            let client = LiveDeltaClient(baseURL: URL(string: "https://deltas.example.com")!)
            following = Task { [list] in _ = try? await list.follow("feed-42", with: client) }  // list.connection says why it stopped
        }

        override func viewDidDisappear(_ animated: Bool) {
            super.viewDidDisappear(animated)
            following?.cancel()
        }

        override func collectionView(_ collectionView: UICollectionView, numberOfItemsInSection section: Int) -> Int { shown.count }

        override func collectionView(_ collectionView: UICollectionView, cellForItemAt indexPath: IndexPath) -> UICollectionViewCell {
            collectionView.dequeueConfiguredReusableCell(using: cell, for: indexPath, item: shown[indexPath.item])
        }
    }
    // end
}

enum SectionedSchedule {
    // snippet: uikit-sectioned
    final class ScheduleViewController: UITableViewController {
        let list = LiveList<Film>()
        var shown: [LiveSection<Film>] = []  // what the view shows: BatchUpdater switches it inside each batch
        var following: Task<Void, Never>?

        override func viewDidLoad() {
            super.viewDidLoad()
            tableView.register(UITableViewCell.self, forCellReuseIdentifier: "film")
            list.onChange = { [unowned self] change in
                switch change {
                case .reset, .window:
                    shown = list.sections
                    tableView.reloadData()
                case .delta(let answer, _, let oldSections):
                    // Sections first (each kept section with its old rows), then the rows, then reloads.
                    BatchUpdater.apply(answer, from: oldSections, to: list.sections, on: tableView, refresh: .reconfigure) { [unowned self] in
                        shown = $0
                    }
                }
            }
        }

        override func viewDidAppear(_ animated: Bool) {
            super.viewDidAppear(animated)
            let client = LiveDeltaClient(baseURL: URL(string: "https://deltas.example.com")!)
            following = Task { [list] in _ = try? await list.follow("schedule-7", with: client) }
        }

        override func viewDidDisappear(_ animated: Bool) {
            super.viewDidDisappear(animated)
            following?.cancel()
        }

        override func numberOfSections(in tableView: UITableView) -> Int { shown.count }

        override func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int { shown[section].items.count }

        override func tableView(_ tableView: UITableView, titleForHeaderInSection section: Int) -> String? {
            if case .string(let title) = shown[section].fields["title"] { title } else { nil }
        }

        override func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
            let cell = tableView.dequeueReusableCell(withIdentifier: "film", for: indexPath)
            var content = cell.defaultContentConfiguration()
            content.text = shown[indexPath.section].items[indexPath.row].title
            cell.contentConfiguration = content
            return cell
        }
    }
    // end
}

enum DiffableFeed {
    // snippet: uikit-diffable
    final class DiffableFeedViewController: UIViewController {
        let list = LiveList<Film>()
        var dataSource: UICollectionViewDiffableDataSource<Int, Int>!  // sections and items by id
        var following: Task<Void, Never>?

        override func viewDidLoad() {
            super.viewDidLoad()
            let layout = UICollectionViewCompositionalLayout.list(using: UICollectionLayoutListConfiguration(appearance: .plain))
            let collectionView = UICollectionView(frame: view.bounds, collectionViewLayout: layout)
            view.addSubview(collectionView)
            let cell = UICollectionView.CellRegistration<UICollectionViewListCell, Film> { cell, _, film in
                var content = cell.defaultContentConfiguration()
                content.text = film.title
                cell.contentConfiguration = content
            }
            dataSource = UICollectionViewDiffableDataSource(collectionView: collectionView) { [unowned self] collectionView, indexPath, _ in
                // The snapshot is list.items by id, in order: the row at indexPath is list.items'.
                collectionView.dequeueConfiguredReusableCell(using: cell, for: indexPath, item: list.items[indexPath.item])
            }
            list.onChange = { [unowned self] change in
                // The rows the server's delta changed in place are marked to be reconfigured.
                guard let snapshot: NSDiffableDataSourceSnapshot<Int, Int> = try? list.snapshot(section: 0, id: \.id, after: change) else { return }
                if case .reset = change {
                    dataSource.applySnapshotUsingReloadData(snapshot)
                } else {
                    dataSource.apply(snapshot, animatingDifferences: true)
                }
            }
        }

        override func viewDidAppear(_ animated: Bool) {
            super.viewDidAppear(animated)
            let client = LiveDeltaClient(baseURL: URL(string: "https://deltas.example.com")!)
            following = Task { [list] in _ = try? await list.follow("feed-42", with: client) }
        }

        override func viewDidDisappear(_ animated: Bool) {
            super.viewDidDisappear(animated)
            following?.cancel()
        }
    }
    // end
}
