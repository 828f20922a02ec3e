import ByteJSON
import MicroHTTP

extension SessionEndpoints {
    /// `POST /sessions/{id}/changes`: keyed operations or an RFC 6902 patch, applied as one
    /// step and answered with its delta, as an update posting the resulting collection would be.
    func applyChanges(_ request: HTTPRequest, id: String) throws(APIError) -> HTTPResponse {
        let changes = try ChangeBody(request, limits: limits)
        // Once the body reads: a malformed one is refused for that first.
        try refuseIfFed(id)
        // How the answer is spelled: the session's own spelling (known once the change has run
        // under its step), but for what the body's options or the query say.
        var (format, detail) = try request.spellingParameters()
        if let given = changes.options {
            // Only how the answer is spelled: the session's other options are fixed.
            guard case .object(let members) = given else { throw .invalidOption(JSONPointer("options"), "options must be an object") }
            if let other = members.keys.first(where: { $0 != Array("format".utf8) && $0 != Array("changes".utf8) }) {
                throw .invalidOption(
                    JSONPointer("options", String(decoding: other, as: UTF8.self)),
                    "a change's options say only how the answer is spelled: format and changes")
            }
            let options = try DiffOptions(given, at: JSONPointer("options"))
            if members[Array("format".utf8)] != nil { format = options.format }
            if members[Array("changes".utf8)] != nil { detail = options.changes }
        }
        let condition = try Self.condition(ifMatch: request.header("If-Match"), baseVersion: changes.baseVersion)
        let maxDepth = limits.maxDepth
        let edit = SessionEdit { current, options, maxItems throws(APIError) in
            let reading = ChangeReading(options: options, maxDepth: maxDepth)
            switch changes.operations {
            case .keyed(let operations):
                return try KeyedEdit(body: changes, operations: operations, reading: reading).apply(to: current, maxItems: maxItems)
            case .patch(let operations):
                return try PatchEdit(body: changes, operations: operations, reading: reading).apply(to: current)
            }
        }
        let change: SessionChange
        do {
            change = try store.edit(id: id, condition: condition, edit)
        } catch {
            throw translate(error, location: .sessionBody, options: store.options(id: id) ?? DiffOptions())
        }
        var spelling = change.options.spelling
        spelling.format = format ?? spelling.format
        spelling.changes = detail ?? spelling.changes
        return try withExtendedLifetime(changes) { () throws(APIError) in try answer(change, spelling: spelling) }
    }
}
