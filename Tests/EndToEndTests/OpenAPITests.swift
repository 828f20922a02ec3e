import ByteJSON
import Foundation
import OpenAPIKit
import TestSupport
import Testing
import Yams

let specURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("openapi.yaml")

func loadSpec() throws -> OpenAPI.Document {
    try YAMLDecoder().decode(OpenAPI.Document.self, from: String(contentsOf: specURL, encoding: .utf8))
}

/// An example value as JSON text.
func jsonText(_ value: AnyCodable) throws -> String {
    String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
}

@Suite(.serialized) struct OpenAPITests {
    @Test func theSpecIsValidOpenAPI() throws {
        let document = try loadSpec()
        try document.validate()
        #expect(document.openAPIVersion == .v3_1_0)
    }

    @Test func theServerServesTheSpecItIsBuiltFrom() throws {
        let server = try ServerProcess()
        let reply = try server.connection().request("GET", "/openapi.yaml")
        #expect(reply.status == 200 && reply.header("Content-Type") == "application/yaml")
        #expect(reply.text == (try String(contentsOf: specURL, encoding: .utf8)))
    }

    /// Every named request example that has a response example of the same name, sent to the
    /// real server, answers it: its status, and a body equal to it as JSON. (Examples whose
    /// answers hold generated ids or depend on earlier requests, such as the sessions', have
    /// none.)
    @Test func everyExampleAnswersAsDocumented() throws {
        let document = try loadSpec()
        let server = try ServerProcess()
        let connection = try server.connection()
        var checked = 0
        for (path, item) in document.paths {
            guard case .b(let pathItem) = item else { continue }
            for endpoint in pathItem.endpoints {
                guard let requestBody = endpoint.operation.requestBody?.b,
                    let examples = requestBody.content[.json]?.b?.examples
                else { continue }
                // Requests the server refuses are kept apart from the request examples, which
                // tools send as valid requests; each is answered by the response example of its name.
                var requests = try examples.compactMap { name, example in try example.b?.dataOrLegacyValue.map { (name, try jsonText($0)) } }
                if let refused = endpoint.operation.vendorExtensions["x-error-examples"]?.value as? [String: Any] {
                    for (name, example) in refused {
                        let value = try #require((example as? [String: Any])?["value"], "x-error-examples/\(name) has no value")
                        let text = String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]), as: UTF8.self)
                        requests.append((name, text))
                    }
                }
                for (name, text) in requests {
                    var expected = [(Int, AnyCodable)]()
                    for (status, response) in endpoint.operation.responses {
                        if let answer = response.b?.content[.json]?.b?.examples?[name]?.b?.dataOrLegacyValue, let code = Int(status.rawValue) {
                            expected.append((code, answer))
                        }
                    }
                    guard !expected.isEmpty else { continue }
                    try #require(expected.count == 1, "request example \(name) has more than one response example of its name")
                    let reply = try connection.request(endpoint.method.rawValue, path.rawValue, json: text)
                    #expect(reply.status == expected[0].0, "\(name): \(reply)")
                    #expect(reply.json == (try JSONValue(parsing: try jsonText(expected[0].1))), "\(name): \(reply)")
                    checked += 1
                }
            }
        }
        #expect(checked >= 8)
    }
}
