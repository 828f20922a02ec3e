import Foundation
import LiveDeltaService
import OpenAPIKit
import TestSupport
import Testing
import Yams

/// The contract's facts live once in the code (the route table, the error catalogue); the
/// spec and the README must say the same, and the spec must say it whole.
@Suite struct ContractTests {
    @Test func theSpecsOperationsAreTheRouteTable() throws {
        let document = try loadSpec()
        var documented = Set<String>()
        for (path, item) in document.paths {
            let pathItem = try #require(item.b)
            for endpoint in pathItem.endpoints { documented.insert("\(endpoint.method.rawValue) \(path.rawValue)") }
        }
        let routed = Set(LiveDeltaService.operations.map { "\($0.method) \($0.template)" })
        #expect(documented == routed)
    }

    /// Each operation's `security` lists the scope the route table checks (bearer, and for the
    /// live routes a cookie too), and open routes say `security: []`.
    @Test func theSpecsSecurityIsTheRouteTablesScopes() throws {
        let yaml = try #require(try Yams.load(yaml: String(contentsOf: specURL, encoding: .utf8)) as? [String: Any])
        let paths = try #require(yaml["paths"] as? [String: Any])
        for (method, template, scope) in LiveDeltaService.operationScopes {
            let operation = try #require((paths[template] as? [String: Any])?[method.lowercased()] as? [String: Any])
            let security = try #require(operation["security"] as? [[String: [String]]], "\(method) \(template) has no security")
            if let scope {
                #expect(security.first == ["bearerAuth": [scope.rawValue]], "\(method) \(template)")
                #expect(security.allSatisfy { $0.values.allSatisfy { $0 == [scope.rawValue] } }, "\(method) \(template)")
            } else {
                #expect(security.isEmpty, "\(method) \(template) is open to all but its security says otherwise")
            }
        }
    }

    @Test func theSpecsErrorCodesAreTheCatalogue() throws {
        let yaml = try #require(try Yams.load(yaml: String(contentsOf: specURL, encoding: .utf8)) as? [String: Any])
        let schemas = (yaml["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let error = ((schemas?["Error"] as? [String: Any])?["properties"] as? [String: Any])?["error"] as? [String: Any]
        let code = (error?["properties"] as? [String: Any])?["code"] as? [String: Any]
        let documented = try #require(code?["enum"] as? [String])
        #expect(documented.count == Set(documented).count)
        #expect(Set(documented) == Set(ErrorCode.allCases.map(\.rawValue)))
    }

    /// docs/errors.md's table: one row or more per code, each with the code's status.
    @Test func theErrorsTableIsTheCatalogue() throws {
        let readme = try String(contentsOf: specURL.deletingLastPathComponent().appendingPathComponent("docs/errors.md"), encoding: .utf8)
        var documented: [String: Int] = [:]
        for line in readme.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, let status = Int(cells[0]), (100...599).contains(status) else { continue }
            for code in cells[1].split(separator: "/") {
                let name = code.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`"))
                #expect(documented[name] == nil, "\(name) is in the errors table twice")
                documented[name] = status
            }
        }
        let catalogue = Dictionary(uniqueKeysWithValues: ErrorCode.allCases.map { ($0.rawValue, $0.status) })
        #expect(documented == catalogue)
    }

    /// Every description in the spec is what the file says: a plain scalar in a flow mapping
    /// (`{description: Old positions, ascending.}`) stops at its first comma, leaving the rest
    /// as a junk key no validator notices. And no member anywhere is null, which such junk is.
    @Test func noDescriptionIsCutShort() throws {
        let text = try String(contentsOf: specURL, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let root = try #require(try Yams.compose(yaml: text))
        var descriptions = 0
        func walk(_ node: Node, at path: String) {
            switch node {
            case .mapping(let mapping):
                for (key, value) in mapping {
                    let name = key.string ?? "?"
                    if case .scalar(let scalar) = value, scalar.tag.description.hasSuffix("null") || (scalar.style == .plain && scalar.string.isEmpty)
                    {
                        Issue.record("\(path)/\(name) is null: a piece of a cut-short scalar?")
                    }
                    if name == "description", case .scalar(let scalar) = value {
                        descriptions += 1
                        if scalar.style == .plain, let mark = value.mark {
                            let line = lines[mark.line - 1]
                            let rest = String(line.dropFirst(mark.column - 1))
                            let after = rest.dropFirst(scalar.string.count).trimmingCharacters(in: .whitespaces)
                            #expect(
                                rest.hasPrefix(scalar.string) && after.allSatisfy { "}]".contains($0) },
                                "\(path)/description at line \(mark.line) reads \"\(scalar.string)\" but the file says \"\(rest)\"")
                        }
                    }
                    walk(value, at: "\(path)/\(name)")
                }
            case .sequence(let sequence):
                for (index, element) in sequence.enumerated() { walk(element, at: "\(path)/\(index)") }
            default: break
            }
        }
        walk(root, at: "")
        #expect(descriptions > 50)
    }
}
