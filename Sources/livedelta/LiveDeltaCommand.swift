import ArgumentParser

@main
struct LiveDeltaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livedelta",
        abstract: "LiveDelta: list deltas (deletions, insertions, moves, reloads) over HTTP.",
        subcommands: [Serve.self, HealthCheck.self, SourcesCommand.self],
        defaultSubcommand: Serve.self)

    /// Runs the command the arguments name, with the flags the environment sets
    /// (`EnvironmentArguments`): all of `serve`'s, and the server's port for `healthcheck`.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "healthcheck":
            main(EnvironmentArguments.applied(to: arguments, for: HealthCheck.self, declaredBy: [HealthCheck.self], only: ["--port"]))
        case "serve":
            HugePages.startWithTunable()
            main(EnvironmentArguments.applied(to: arguments, for: Serve.self, declaredBy: [Serve.self, AuthOptions.self]))
        case "help", "sources":
            main(arguments)
        default:
            // No subcommand named: serve, the default.
            HugePages.startWithTunable()
            main(EnvironmentArguments.applied(to: arguments, for: Serve.self, declaredBy: [Serve.self, AuthOptions.self]))
        }
    }
}
