import ByteJSON
import Foundation
import TestSupport
import Testing

/// The README stays short, every link in the project's Markdown leads somewhere (a file that
/// exists, and, where it names a heading, a heading that file has), the configuration table is
/// the flags, and the shell examples run against the real binary and answer what they show.
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
        // And it is the flags' own declarations, written out: their variables, defaults and help.
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        check.arguments = ["python3", "scripts/configuration-table.py", "--check", ServerProcess.binary.path]
        check.currentDirectoryURL = Self.root
        let messages = Pipe()
        check.standardError = messages
        try check.run()
        let message = String(decoding: messages.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        check.waitUntilExit()
        #expect(check.terminationStatus == 0, "\(message)")
    }

    /// Every base image is named in full (podman without registry aliases refuses short
    /// names), and docs/operations.md names exactly the packages the runtime image installs.
    @Test func theDockerfileNamesItsImagesInFullAndTheDocsItsPackages() throws {
        let dockerfile = try String(contentsOf: Self.root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let bases = dockerfile.split(separator: "\n").filter { $0.hasPrefix("FROM ") }.map { $0.split(separator: " ")[1] }
        #expect(bases.count == 2)
        for base in bases { #expect(base.hasPrefix("docker.io/library/"), "\(base) is a short name") }
        // The run stage's packages, without their pinned versions.
        let runStage = try #require(dockerfile.components(separatedBy: "\nFROM ").last)
        let installed = Set(Self.matches(of: #"\blib[a-z0-9.+-]+(?==)"#, in: runStage))
        #expect(installed == ["libmicrohttpd12", "libhiredis0.14", "libcurl4", "libpq5"])
        let operations = try String(contentsOf: Self.root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let container = try #require(operations.components(separatedBy: "The image builds on").dropFirst().first)
        let named = Set(Self.matches(of: #"`(lib[a-z0-9.+-]+)`"#, in: String(container.prefix(600))).map { $0.trimmingCharacters(in: ["`"]) })
        #expect(named == installed, "docs/operations.md names \(named.sorted()), the image installs \(installed.sorted())")
        for base in bases { #expect(operations.contains(String(base).replacingOccurrences(of: " AS build", with: ""))) }
    }

    /// `make help` lists every target the Makefile declares and every `make …` the docs tell
    /// a reader to run, each with what it does.
    @Test func makeHelpListsEveryTargetTheDocsName() throws {
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/make")
        make.arguments = ["-s", "-C", Self.root.path, "help"]
        let output = Pipe()
        make.standardOutput = output
        try make.run()
        let help = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        make.waitUntilExit()
        let listed = Set(help.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        let makefile = try String(contentsOf: Self.root.appendingPathComponent("Makefile"), encoding: .utf8)
        let phony = makefile.split(separator: "\n").first { $0.hasPrefix(".PHONY:") }?.split(separator: " ").dropFirst().map(String.init) ?? []
        #expect(phony.count > 20)
        #expect(Set(phony).subtracting(listed).isEmpty, "not in make help: \(Set(phony).subtracting(listed).sorted())")
        var named = Set<String>()
        for document in Self.documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            named.formUnion(Self.matches(of: #"`make [a-z][a-z-]*"#, in: text).map { String($0.dropFirst(6)) })
        }
        #expect(named.contains("test") && named.contains("check"))
        #expect(named.subtracting(listed).isEmpty, "named in the docs, not in make help: \(named.subtracting(listed).sorted())")
    }

    /// A shell example of the docs, and the answer shown right after it, if any.
    struct ShellExample {
        var place: String
        var script: String
        var shownAnswer: String?
    }

    /// The ```sh blocks of `text`, each with the ```json block that follows it.
    static func shellExamples(in text: String, file: String) -> [ShellExample] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var examples: [ShellExample] = []
        var index = 0
        while index < lines.count {
            guard lines[index] == "```sh" else {
                index += 1
                continue
            }
            let start = index + 1
            var end = start
            while end < lines.count && lines[end] != "```" { end += 1 }
            var example = ShellExample(place: "\(file):\(index + 1)", script: lines[start..<end].joined(separator: "\n"))
            if end + 1 < lines.count && lines[end + 1] == "```json" {
                var close = end + 2
                while close < lines.count && lines[close] != "```" { close += 1 }
                example.shownAnswer = lines[(end + 2)..<close].joined(separator: "\n")
            }
            examples.append(example)
            index = end + 1
        }
        return examples
    }

    /// Examples that need more than a server on :8080, and why.
    static let notRunHere = [
        "docs/sessions.md": "starts Redis and two release builds on other ports (ReplicaTests run the same)",
        "docs/access.md": "needs the operator's secret file (AuthTests sign tokens the same way)",
    ]

    /// Every shell example of the README and docs/ that talks to a server on localhost:8080 runs
    /// against the real binary, in order, one server per document: each curl must get a 2xx,
    /// a ```json block after an example must equal its answer (or, where it elides with `...`,
    /// hold pieces found in it), and a `# ...text...` line must name text found in the output.
    @Test func everyShellExampleRunsAgainstTheRealServer() throws {
        var ran = 0
        var skipped: [String] = []
        for document in Self.documents {
            let name = document.path.replacingOccurrences(of: Self.root.path + "/", with: "")
            let examples = Self.shellExamples(in: try String(contentsOf: document, encoding: .utf8), file: name)
            guard !examples.isEmpty else { continue }
            var server: ServerProcess?
            for example in examples {
                // Examples without curl (make, docker) are not API examples.
                guard example.script.split(separator: "\n").contains(where: { $0.hasPrefix("curl ") }) else { continue }
                let commands = example.script.split(separator: "\n").filter { $0.first?.isLetter == true || $0.first == "." }
                guard commands.allSatisfy({ $0.hasPrefix("curl ") }), example.script.contains("localhost:8080") else {
                    skipped.append(example.place)
                    continue
                }
                if server == nil { server = try ServerProcess() }
                guard let port = server?.port else { continue }
                let output = try Self.run(example.script, port: port)
                #expect(output.status == 0, "\(example.place): exit \(output.status): \(output.text.prefix(300))")
                let flat = Self.withoutSpaces(output.text)
                // What the docs show, with `...` for what they leave out: each piece shown is in the output.
                func expectPieces(of shown: String) {
                    for piece in Self.withoutSpaces(shown).components(separatedBy: "...") {
                        let trimmed = piece.trimmingCharacters(in: CharacterSet(charactersIn: ","))
                        #expect(trimmed.isEmpty || flat.contains(trimmed), "\(example.place): \(trimmed) is not in \(output.text.prefix(600))")
                    }
                }
                for line in example.script.split(separator: "\n") where line.hasPrefix("# ...") { expectPieces(of: String(line.dropFirst(2))) }
                if let shown = example.shownAnswer {
                    if let expected = try? JSONValue(parsing: shown) {
                        #expect((try? JSONValue(parsing: output.text)) == expected, "\(example.place): the answer is \(output.text)")
                    } else {
                        expectPieces(of: shown)
                    }
                }
                ran += 1
            }
            _ = server?.stop()
        }
        #expect(ran >= 7)
        let skippedFiles = Set(skipped.map { String($0.split(separator: ":")[0]) })
        #expect(skippedFiles == Set(Self.notRunHere.keys), "examples not run: \(skipped)")
    }

    /// Runs `script` with bash against the server on `port`: curl fails on an error status,
    /// streams stop after two seconds, and the script waits for what it started.
    static func run(_ script: String, port: UInt16) throws -> (status: Int32, text: String) {
        // A stream in the foreground ends at its time limit (curl's 28), as a reader's would.
        let lines = script.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("curl -N ") && !line.contains("&") ? line + " || test $? -eq 28" : String(line)
        }
        let rewritten = lines.joined(separator: "\n")
            .replacingOccurrences(of: "localhost:8080", with: "127.0.0.1:\(port)")
            .replacingOccurrences(of: "curl -N ", with: "curl -sN --max-time 2 ")
            .replacingOccurrences(of: "curl -s ", with: "curl -sS --fail-with-body ")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        // Background jobs are waited for; a failing foreground curl ends the script.
        shell.arguments = ["-e", "-c", rewritten + "\nwait"]
        let output = Pipe()
        shell.standardOutput = output
        try shell.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        return (shell.terminationStatus, text)
    }

    static func withoutSpaces(_ text: String) -> String { text.filter { !$0.isWhitespace } }

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
