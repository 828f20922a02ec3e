import Foundation
import LiveDeltaKit
import Testing

// The Swift snippets of the README and docs/ that use no UIKit, compiled here (those that do are
// in Tests/UIKitAdapterTests): the test below checks that each block of the docs is, line for
// line, the text between a `// snippet:` marker and `// end` in one of those files.

/// The documented model (`documentedModel` compiles the docs' block of it).
struct Film: Codable, Sendable, Equatable {
    var id: Int
    var title: String
}

func documentedModel() {
    // snippet: model
    struct Film: Codable, Sendable, Equatable {
        var id: Int
        var title: String
    }
    // end
    _ = Film(id: 1, title: "Alien")
}

@MainActor
func documentedCalls() async throws {
    // snippet: calls
    let client = LiveDeltaClient(baseURL: URL(string: "http://localhost:8080")!)
    _ = try await client.putSession("feed-42", .items([Film(id: 1, title: "Alien")]))
    let answer = try await client.update("feed-42", to: .items([Film(id: 2, title: "Brazil"), Film(id: 1, title: "Alien")]))
    print(answer.version, answer.answer.delta?.insertions ?? [])  // 1 [0]
    // A retry of a write whose answer was lost: the same key, committed once.
    let key = WriteOptions(idempotencyKey: UUID().uuidString)
    _ = try await client.append("feed-42", .items([Film(id: 3, title: "Cabaret")]), write: key)
    // end
}

@MainActor
func documentedFollow() async throws {
    // snippet: follow
    let client = LiveDeltaClient(
        baseURL: URL(string: "http://localhost:8080")!,
        token: { refresh in
            refresh ? "a new token" : "the token"  // asked again after a 401
        })
    let list = LiveList<Film>()
    list.onChange = { [weak list] change in  // weak: the list holds onChange
        guard let list else { return }
        switch change {
        case .reset: print("show", list.items)
        case .delta(let answer, let oldItems, _): print("animate", answer, "from", oldItems, "to", list.items)
        case .window: print("rows", list.window?.offset ?? 0, "of", list.window?.total ?? 0)  // a window's place changed
        }
    }
    let stop = try await list.follow("feed-42", with: client)  // until the session ends, or the task is cancelled
    print("stopped:", stop)  // deleted, expired, evicted or cancelled; list.connection says it too
    // end
}

/// Every Swift block of the README and docs/ is compiled: here, or (a block that imports UIKit or
/// SwiftUI) in Tests/UIKitAdapterTests against those frameworks' transcribed declarations. A
/// block is compared without its `import` lines, which the compiled files hold at their tops.
@Test func theDocumentedSnippetsAreTheCompiledOnes() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let adapterTests = root.appendingPathComponent("Tests/UIKitAdapterTests")
    let files =
        [URL(fileURLWithPath: #filePath)]
        + (try FileManager.default.contentsOfDirectory(atPath: adapterTests.path)).filter { $0.hasPrefix("Documented") }.map {
            adapterTests.appendingPathComponent($0)
        }
    var compiled: [String: String] = [:]
    for file in files {
        var name: String?
        var lines: [String] = []
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// snippet: ") {
                name = String(trimmed.dropFirst("// snippet: ".count))
                lines = []
            } else if trimmed == "// end", let current = name {
                #expect(compiled[current] == nil, "two snippets named \(current)")
                compiled[current] = lines.joined(separator: "\n")
                name = nil
            } else if name != nil {
                lines.append(String(line.dropFirst(4)))
            }
        }
    }
    let documents = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path).filter { $0.hasSuffix(".md") }
    var shown: Set<String> = []
    for document in ["README.md"] + documents.map({ "docs/" + $0 }) {
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        for block in text.components(separatedBy: "```swift\n").dropFirst().map({ $0.components(separatedBy: "\n```")[0] }) {
            let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
            let imports = Set(lines.filter { $0.hasPrefix("import ") }.map { String($0.dropFirst("import ".count)) })
            #expect(imports.isSubset(of: ["Foundation", "LiveDeltaKit", "UIKit", "SwiftUI"]), "\(document): a block imports \(imports)")
            var code = lines.filter { !$0.hasPrefix("import ") }
            while code.first?.isEmpty == true { code.removeFirst() }
            let match = compiled.first { $0.value == code.joined(separator: "\n") }?.key
            #expect(match != nil, "\(document): a Swift block that is not compiled:\n\(block)")
            shown.formUnion([match].compactMap { $0 })
        }
    }
    #expect(shown == Set(compiled.keys), "each compiled snippet is in the docs")
}
