// swift-tools-version: 6.2
import PackageDescription

/// Dependencies point down only:
/// livedelta (executable) -> LiveDeltaService -> (LiveCollections, MicroHTTP) -> CMicroHTTPD.
let package = Package(
    name: "LiveDelta",
    products: [
        .library(name: "LiveCollections", targets: ["LiveCollections"]),
    ],
    dependencies: [
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // The delta engine: protocols, deltas, algorithms, CollectionData. No HTTP, no JSON.
        .target(name: "LiveCollections"),
        .testTarget(
            name: "LiveCollectionsTests",
            dependencies: [
                "LiveCollections",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        // Benchmarks run as release executables; they print figures and never assert timings.
        .executableTarget(
            name: "EngineBenchmark",
            dependencies: ["LiveCollections"],
            path: "Benchmarks/EngineBenchmark"
        ),
    ],
    swiftLanguageModes: [.v6]
)
