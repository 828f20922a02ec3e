// swift-tools-version: 6.2
import PackageDescription

/// libFuzzer targets over the root package, built with AddressSanitizer and coverage by
/// `make fuzz` (see the Makefile): the JSON scanner, the service's request path, and the
/// engine with replay. A package of its own, so that the sanitizer flags and libFuzzer's `main`
/// never reach the server's own build.
let fuzzer: [LinkerSetting] = [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])]

let package = Package(
    name: "LiveDeltaFuzz",
    dependencies: [.package(name: "LiveDelta", path: "..")],
    targets: [
        .target(name: "CLibFuzzer"),
        .executableTarget(
            name: "FuzzJSON", dependencies: ["CLibFuzzer", .product(name: "ByteJSON", package: "LiveDelta")],
            linkerSettings: fuzzer),
        .executableTarget(
            name: "FuzzService",
            dependencies: ["CLibFuzzer", .product(name: "LiveDeltaService", package: "LiveDelta"), .product(name: "ByteJSON", package: "LiveDelta")],
            linkerSettings: fuzzer),
        .executableTarget(
            name: "FuzzEngine", dependencies: ["CLibFuzzer", .product(name: "LiveCollections", package: "LiveDelta")],
            linkerSettings: fuzzer),
    ],
    swiftLanguageModes: [.v6]
)
