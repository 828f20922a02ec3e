import LiveDeltaPostgres
import LiveDeltaService
import Logging
import TokenAuth

extension Serve {
    /// The sources `--sources` declares, on `--postgres`; nil where none are. Throws what
    /// stops start-up: a file that cannot be read or used, a query PostgreSQL refuses.
    func makeSources(store: any SessionStore, leases: any SourceLeases, metrics: ServiceMetrics, logger: Logger) throws -> (any SessionSources)? {
        guard let path = sources, let postgres else { return nil }
        let file = try KeyFile.read(path, what: "a sources file")
        let sources = try PostgresSources(
            file: file, conninfo: postgres, store: store, leases: leases, maxItems: maxSessionItems == 0 ? .max : maxSessionItems, metrics: metrics,
            logger: logger)
        logger.notice("sources declared", metadata: ["sources": "\(sources.names.joined(separator: ", "))", "file": "\(path)"])
        return sources
    }
}
