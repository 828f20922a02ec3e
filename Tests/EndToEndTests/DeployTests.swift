import ByteJSON
import Foundation
import TestSupport
import Testing

/// deploy/'s alert rules and dashboard ask only for metrics the server exports: every
/// `livedelta_…` name they use is on a running server's /metrics (Redis store, a source on a
/// throwaway PostgreSQL, and a little traffic, so that every labelled series exists); and the
/// compose file and manifests set only variables the server reads. The rules themselves go
/// through promtool, and the manifests through podman, in `make deploy`.
@Suite struct DeployTests {
    @Test func theRulesAndTheDashboardNameOnlyExportedMetrics() throws {
        let database = try SourceTests.Database()
        let redis = try RedisProcess()
        let server = try database.server(["--session-store", redis.url])
        let connection = try server.connection()
        #expect(try SourceTests.create(connection, "gold", source: "leaderboard", params: #"{"league": "gold"}"#).status == 201)
        try database.postgres.sql("UPDATE players SET score = 999 WHERE id = 2")
        #expect(try SourceTests.settles(connection, "gold", at: try database.selected("gold")) == 1)
        _ = try connection.request("GET", "/sessions/nowhere")
        _ = try connection.request("POST", "/diff", json: #"{"old": [1], "new": [2]}"#)
        let exported = Set(
            try connection.request("GET", "/metrics").text.split(separator: "\n").compactMap { line -> String? in
                let text = line.hasPrefix("# TYPE ") ? line.dropFirst(7) : line
                guard !text.hasPrefix("#"), let name = text.split(whereSeparator: { $0 == " " || $0 == "{" }).first else { return nil }
                return String(name)
            })
        let root = DocumentationTests.root.appendingPathComponent("deploy")
        for file in ["prometheus/alerts.yaml", "grafana/livedelta.json"] {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            let named = Set(text.matches(of: /livedelta_[a-z_]+/).map { String($0.output) })
            #expect(named.count >= 8, "\(file) names \(named.sorted())")
            for name in named.sorted() {
                // A histogram's series are named after it.
                let metric = name.replacing(/_(bucket|sum|count)$/, with: "")
                #expect(exported.contains(metric) || exported.contains(name), "\(file) names \(name), which /metrics does not export")
            }
        }
        // Every variable the compose file and the manifests set is one the server reads (the
        // configuration table lists them all, and another test holds it to --help).
        let table = try String(contentsOf: DocumentationTests.root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        for file in ["compose.yaml", "kubernetes/livedelta.yaml"] {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            let variables = Set(text.matches(of: /LIVEDELTA_[A-Z_]+/).map { String($0.output) })
            #expect(variables.contains("LIVEDELTA_SESSION_STORE"), "\(file)")
            for variable in variables.sorted() { #expect(table.contains("`\(variable)`"), "\(file) sets \(variable), which no flag reads") }
        }
        if case .object(let dashboard) = try JSONValue(
            parsing: String(contentsOf: root.appendingPathComponent("grafana/livedelta.json"), encoding: .utf8))
        {
            #expect(dashboard[Array("panels".utf8)]?.array?.isEmpty == false)
        } else {
            Issue.record("the dashboard is no JSON object")
        }
    }
}
