import Foundation
import TestSupport
import Testing

/// The README stays short, and every link in the project's Markdown leads somewhere: a file
/// that exists, and, where it names a heading, a heading that file has.
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var documents: [URL] {
        let top = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"].map { root.appendingPathComponent($0) }
        let docs = (try? FileManager.default.contentsOfDirectory(at: root.appendingPathComponent("docs"), includingPropertiesForKeys: nil)) ?? []
        return top + docs.filter { $0.pathExtension == "md" }.sorted { $0.path < $1.path }
    }

    @Test func theREADMEIsShort() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 200)
    }

    @Test func everyLinkResolves() throws {
        var checked = 0
        for document in Self.documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            for target in Self.links(in: text) where !target.contains("://") && !target.hasPrefix("mailto:") {
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(parts[0])
                let file = path.isEmpty ? document : document.deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
                #expect(FileManager.default.fileExists(atPath: file.path), "\(document.lastPathComponent): \(target) leads nowhere")
                if parts.count == 2, file.pathExtension == "md", let linked = try? String(contentsOf: file, encoding: .utf8) {
                    #expect(Self.anchors(in: linked).contains(String(parts[1])), "\(document.lastPathComponent): \(target) names no heading")
                }
                checked += 1
            }
        }
        #expect(checked > 20)
    }

    /// The configuration table names every flag `livedelta --help` lists, and no other.
    @Test func theConfigurationTableIsTheFlags() throws {
        let help = Process()
        help.executableURL = ServerProcess.binary
        help.arguments = ["serve", "--help"]
        let output = Pipe()
        help.standardOutput = output
        try help.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        help.waitUntilExit()
        let flags = Set(Self.matches(of: #"--[a-z][a-z-]+"#, in: text)).subtracting(["--help"])
        let table = try String(contentsOf: Self.root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let rows = table.split(separator: "\n").filter { $0.hasPrefix("| `--") }.map { String($0.split(separator: "|").first ?? "") }
        let documented = Set(rows.flatMap { Self.matches(of: #"--[a-z][a-z-]+"#, in: $0) })
        #expect(flags.count > 30)
        #expect(flags.subtracting(documented).isEmpty, "not in docs/operations.md: \(flags.subtracting(documented).sorted())")
        #expect(documented.subtracting(flags).isEmpty, "not flags: \(documented.subtracting(flags).sorted())")
    }

    static func matches(of pattern: String, in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range, in: text).map { String(text[$0]) }
        }
    }

    /// `[text](target)` outside code blocks and code spans.
    static func links(in text: String) -> [String] {
        var found: [String] = []
        var inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inBlock.toggle() }
            if inBlock { continue }
            let unquoted = line.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
                .joined()
            var rest = Substring(unquoted)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                found.append(String(after[..<close]).split(separator: " ").first.map(String.init) ?? "")
                rest = after[close...]
            }
        }
        return found
    }

    /// GitHub's anchors for a file's headings: lower case, spaces to hyphens, punctuation gone.
    static func anchors(in text: String) -> Set<String> {
        var anchors = Set<String>()
        var inBlock = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { inBlock.toggle() }
            guard !inBlock, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
            anchors.insert(String(title.compactMap { $0 == " " ? "-" : ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : nil }))
        }
        return anchors
    }
}
