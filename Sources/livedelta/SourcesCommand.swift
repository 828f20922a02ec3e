import ArgumentParser
import LiveDeltaPostgres
import TokenAuth

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `livedelta sources triggers FILE`: the SQL that makes a database tell the sources of its
/// changes.
struct SourcesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources", abstract: "Work with a sources file (docs/sources.md).", subcommands: [Triggers.self])

    struct Triggers: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print the CREATE TRIGGER SQL that notifies each source's channels when a table its query reads changes (the tables as PostgreSQL plans the queries)."
        )

        @Argument(help: "The sources file.")
        var file: String

        @Option(help: "The PostgreSQL the sources read, as a libpq connection string.")
        var postgres: String

        func run() throws {
            do {
                print(try SourceTriggers.sql(file: try KeyFile.read(file, what: "a sources file"), conninfo: postgres), terminator: "")
            } catch {
                let message = Array("livedelta sources triggers: \(error)\n".utf8)
                _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
                throw ExitCode.failure
            }
        }
    }
}
