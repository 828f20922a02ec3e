import ByteJSON
import CLibFuzzer
import Glibc

@testable import LiveDeltaService
@testable import MicroHTTP

/// One service, as the server runs it, with small limits so that inputs reach them.
let service: LiveDeltaService = {
    var configuration = LiveDeltaService.Configuration()
    configuration.maxDepth = 64
    configuration.maxItemsPerRequest = 10_000
    return LiveDeltaService(configuration: configuration)
}()

let routes = ["/diff", "/sessions", "/sessions/fuzz", "/sessions/fuzz/update", "/sessions/fuzz/append", "/sessions/fuzz/delta"]

/// The first byte picks a route and method, the rest is the body: every answer is JSON with
/// an expected status, whatever the body (a crash, a trap or a 5xx is a finding). With its top
/// bit set, the route is writes by change: keyed operations, or (bit 0x20) a JSON Patch.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    guard size > 0 else { return 0 }
    let changes = data[0] & 0x80 != 0
    let route = changes ? "/sessions/fuzz/changes" : routes[Int(data[0]) % routes.count]
    let method = route == "/sessions/fuzz" ? "PUT" : "POST"
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var headers = [("Content-Type", changes && data[0] & 0x20 != 0 ? "application/json-patch+json" : "application/json")]
    if data[0] & 0x40 != 0 { headers.append(("If-Match", "\"\(data[0] & 3)\"")) }
    let response = service.handle(HTTPRequest(method: method, path: route, headers: headers, body: body))
    // 409: a change that names what is not there, or a failed test.
    guard [200, 201, 400, 404, 409, 412, 413, 422, 503].contains(response.status) else {
        fatalError("status \(response.status) for \(route): \(String(decoding: response.body, as: UTF8.self))")
    }
    guard let answer = response.body.withUnsafeBufferPointer({ try? JSONValue(parsing: $0) }) else {
        fatalError("the answer is not JSON: \(String(decoding: response.body, as: UTF8.self))")
    }
    if response.status >= 400 && answer["error"]?["code"] == nil { fatalError("an error without a code") }
    return 0
}

exit(cfuzz_main(CommandLine.argc, CommandLine.unsafeArgv) { fuzz($0, $1) })
