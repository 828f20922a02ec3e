import ArgumentParser

@main
struct LiveDeltaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livedelta",
        abstract: "LiveDelta: list deltas (deletions, insertions, moves, reloads) over HTTP.",
        subcommands: [Serve.self, HealthCheck.self],
        defaultSubcommand: Serve.self)
}
