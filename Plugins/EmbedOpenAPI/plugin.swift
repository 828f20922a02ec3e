import PackagePlugin

/// Compiles the package's openapi.yaml into the target as `OpenAPISpec.yaml`, so the binary
/// serves the very spec in the repository and needs no file beside it.
@main
struct EmbedOpenAPI: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let spec = context.package.directoryURL.appending(path: "openapi.yaml")
        let output = context.pluginWorkDirectoryURL.appending(path: "OpenAPISpec.swift")
        return [
            .buildCommand(
                displayName: "Embedding openapi.yaml",
                executable: try context.tool(named: "EmbedText").url,
                arguments: [spec.path(percentEncoded: false), output.path(percentEncoded: false), "OpenAPISpec", "yaml"],
                inputFiles: [spec],
                outputFiles: [output])
        ]
    }
}
