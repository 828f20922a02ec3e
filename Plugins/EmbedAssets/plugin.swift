import PackagePlugin

/// Compiles the files the binary serves into the target, so that it serves the very files in
/// the repository and needs none beside it: openapi.yaml as `OpenAPISpec.yaml`, the live page,
/// its script and style, and the JavaScript client's modules (`LivePage.html`, ...).
@main
struct EmbedAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let tool = try context.tool(named: "EmbedText").url
        let files: [(path: String, type: String, property: String)] = [
            ("openapi.yaml", "OpenAPISpec", "yaml"),
            ("clients/web/live.html", "LivePage", "html"),
            ("clients/web/live.js", "LivePageScript", "javascript"),
            ("clients/web/live.css", "LivePageStyle", "css"),
            ("clients/js/livedelta.js", "ClientModule", "javascript"),
            ("clients/js/appliers.js", "ClientAppliersModule", "javascript"),
            ("clients/js/dom.js", "ClientDOMModule", "javascript"),
        ]
        return files.map { file in
            let input = context.package.directoryURL.appending(path: file.path)
            let output = context.pluginWorkDirectoryURL.appending(path: "\(file.type).swift")
            return .buildCommand(
                displayName: "Embedding \(file.path)", executable: tool,
                arguments: [input.path(percentEncoded: false), output.path(percentEncoded: false), file.type, file.property],
                inputFiles: [input], outputFiles: [output])
        }
    }
}
