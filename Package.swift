// swift-tools-version: 6.2
import PackageDescription

/// Dependencies point down only:
/// livedelta (executable) -> LiveDeltaRedis -> (RedisClient -> CHiredis, LiveDeltaService),
/// LiveDeltaPostgres -> (CLibPQ, LiveDeltaService),
/// LiveDeltaService -> (LiveCollections, ByteJSON, MicroHTTP -> (CMicroHTTPD, CLinuxEvents),
/// TokenAuth -> ByteJSON, CCurl, jwt-kit). LiveDeltaKit, the Swift client, depends on
/// Foundation alone.
let package = Package(
    name: "LiveDelta",
    // For LiveDeltaKit, the one product an app adds; the server builds on Linux.
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
    products: [
        .library(name: "LiveCollections", targets: ["LiveCollections"]),
        // The Swift client for apps (iOS, macOS, tvOS, visionOS, Linux): Foundation only, none of
        // the server's C libraries or NIO. Static: `swift build --product` of an automatic
        // library builds every target of the package; of a static one, only its own.
        .library(name: "LiveDeltaKit", type: .static, targets: ["LiveDeltaKit"]),
        // For the fuzzers (Fuzz/, a package of its own that builds them with sanitizers).
        .library(name: "ByteJSON", targets: ["ByteJSON"]),
        .library(name: "LiveDeltaService", targets: ["LiveDeltaService"]),
        .executable(name: "livedelta", targets: ["livedelta"]),
    ],
    dependencies: [
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // NIOConcurrencyHelpers only: locks on pthread mutexes, which ThreadSanitizer sees
        // (it cannot see the futex inside the standard library's Mutex on Linux).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // JOSE: the signature checks of bearer tokens (TokenAuth).
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // `swift package generate-documentation`: the libraries' reference (make api-docs).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The delta engine: protocols, deltas, algorithms, CollectionData. No HTTP, no JSON.
        .target(name: "LiveCollections", dependencies: [.product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        // RFC 8259 JSON over raw bytes: a validating scanner that hashes values by meaning, a
        // small value tree and a writer. Knows no deltas and no HTTP.
        // `Builtin` gives its SIMD lanes the processor's compare and movemask (ByteLanes.swift).
        .target(name: "ByteJSON", swiftSettings: [.enableExperimentalFeature("BuiltinModule")]),
        // A thin C shim over libmicrohttpd (Debian's libmicrohttpd-dev).
        .target(
            name: "CMicroHTTPD",
            linkerSettings: [.linkedLibrary("microhttpd")]
        ),
        // Linux's epoll and eventfd headers, which Glibc's Swift module leaves out.
        .target(name: "CLinuxEvents"),
        // A thin C shim over hiredis (Debian's libhiredis-dev).
        .target(name: "CHiredis", linkerSettings: [.linkedLibrary("hiredis")]),
        // A blocking Redis client on the shim: a bounded pool, timeouts, reconnection. Knows no sessions.
        .target(name: "RedisClient", dependencies: ["CHiredis", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        // A Redis Cluster over RedisClient's pools, a pool a node: the slot map, redirections,
        // retries while the cluster moves slots or fails over. Knows no sessions.
        .target(name: "RedisCluster", dependencies: ["RedisClient"]),
        // A thin C shim over libpq (Debian's libpq-dev): sessions fed by PostgreSQL queries.
        .target(name: "CLibPQ", linkerSettings: [.linkedLibrary("pq")]),
        // A thin C shim over libcurl (Debian's libcurl4-openssl-dev): fetching a JWK Set.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        // Bearer tokens: keys bound to their algorithms, claims, tenants and scopes, a cache of
        // accepted tokens. Signatures are jwt-kit's. Knows no HTTP and no sessions.
        .target(
            name: "TokenAuth",
            dependencies: [
                "ByteJSON", "CCurl", .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // A Swift HTTP server on the shim: requests, responses, limits. Knows no deltas.
        .target(name: "MicroHTTP", dependencies: ["CMicroHTTPD", "CLinuxEvents", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        // The HTTP API: routes, the JSON wire format, sessions, errors.
        .target(
            name: "LiveDeltaService",
            dependencies: [
                "LiveCollections", "MicroHTTP", "ByteJSON", "TokenAuth",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            plugins: ["EmbedAssets"]
        ),
        // The session store in Redis, behind the service's `SessionStorage` seam: the service
        // itself builds and runs without hiredis.
        .target(
            name: "LiveDeltaRedis",
            dependencies: ["LiveDeltaService", "RedisClient", .product(name: "Logging", package: "swift-log")]
        ),
        // Sessions fed by ordered PostgreSQL queries, behind the service's `SessionSources` seam:
        // the service itself builds and runs without libpq.
        .target(
            name: "LiveDeltaPostgres",
            dependencies: [
                "LiveDeltaService", "CLibPQ", "ByteJSON", "MicroHTTP", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The executable: flags, environment, logging, signals.
        .executableTarget(
            name: "livedelta",
            dependencies: [
                "LiveDeltaService", "LiveDeltaRedis", "LiveDeltaPostgres", "MicroHTTP", "RedisClient", "RedisCluster", "TokenAuth",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // The Swift client: calls, live sessions, lists kept by version, batch updates for
        // UIKit and AppKit. Depends on Foundation alone.
        .target(name: "LiveDeltaKit"),
        // Build-time: openapi.yaml and the live page into the service as strings.
        .executableTarget(name: "EmbedText"),
        .plugin(name: "EmbedAssets", capability: .buildTool(), dependencies: ["EmbedText"]),
        .testTarget(
            name: "LiveCollectionsTests",
            dependencies: [
                "LiveCollections", "TestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "ByteJSONTests",
            dependencies: ["ByteJSON", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(
            name: "LiveDeltaServiceTests",
            dependencies: [
                "LiveDeltaService", "ByteJSON", "MicroHTTP", "LiveCollections", "TestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "MicroHTTPTests",
            dependencies: ["MicroHTTP", "TestSupport", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
        ),
        .testTarget(name: "RedisClientTests", dependencies: ["RedisClient", "TestSupport"]),
        .testTarget(name: "RedisClusterTests", dependencies: ["RedisCluster", "RedisClient", "TestSupport"]),
        // The Swift client against the real binary, and its batch updates against a double
        // that enforces UIKit's rules.
        .testTarget(name: "LiveDeltaKitTests", dependencies: ["LiveDeltaKit", "TestSupport"]),
        // UIKit, AppKit and SwiftUI as Apple documents them, transcribed (Linux has no Apple SDK):
        // the adapters (UIKitViews.swift, AppKitViews.swift, linked into the test targets) and the
        // docs' snippets for them compile against these, so a wrong label or closure type fails.
        .target(name: "UIKitTranscribed", path: "Tests/AppleSDK/UIKitTranscribed"),
        .target(name: "AppKitTranscribed", path: "Tests/AppleSDK/AppKitTranscribed"),
        .target(name: "SwiftUITranscribed", path: "Tests/AppleSDK/SwiftUITranscribed"),
        .testTarget(
            name: "UIKitAdapterTests",
            dependencies: ["LiveDeltaKit", "UIKitTranscribed", "SwiftUITranscribed", "TestSupport"],
            swiftSettings: [.define("TRANSCRIBED_UIKIT")]
        ),
        .testTarget(
            name: "AppKitAdapterTests", dependencies: ["LiveDeltaKit", "AppKitTranscribed"], swiftSettings: [.define("TRANSCRIBED_APPKIT")]
        ),
        // The Redis session store in process, on a real redis-server the tests start.
        .testTarget(
            name: "LiveDeltaRedisTests",
            dependencies: [
                "ByteJSON", "LiveDeltaRedis", "LiveDeltaService", "MicroHTTP", "RedisClient", "RedisCluster", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        // Tests against the real binary over HTTP (run `swift build` first; see the Makefile).
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TestSupport", "ByteJSON", "LiveCollections", "LiveDeltaService", "LiveDeltaRedis", "RedisClient",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // A blocking HTTP client and a launcher for the real binary, for tests only.
        .target(
            name: "TestSupport",
            dependencies: ["LiveCollections", .product(name: "PropertyBased", package: "swift-property-based")],
            path: "Tests/TestSupport"
        ),
        // Benchmarks run as release executables; they print figures and never assert timings.
        .executableTarget(
            name: "EngineBenchmark",
            dependencies: ["LiveCollections"],
            path: "Benchmarks/EngineBenchmark"
        ),
        .executableTarget(
            name: "ServiceBenchmark",
            dependencies: ["LiveDeltaService", "ByteJSON", "MicroHTTP"],
            path: "Benchmarks/ServiceBenchmark"
        ),
        // Token checks in process, each algorithm, with and without the cache (bench-auth).
        .executableTarget(name: "TokenBenchmark", dependencies: ["TokenAuth"], path: "Benchmarks/TokenBenchmark"),
        // The subscriber side of bench-live: thousands of event streams read on one epoll thread.
        .executableTarget(name: "LiveSubscribers", dependencies: ["BenchStreams"], path: "Benchmarks/LiveSubscribers"),
        // The subscriber side of bench-windows: thousands of windows of one session.
        .executableTarget(name: "WindowSubscribers", dependencies: ["BenchStreams"], path: "Benchmarks/WindowSubscribers"),
        .target(name: "BenchStreams", dependencies: ["CLinuxEvents"], path: "Benchmarks/BenchStreams"),
        // Starts and stops a server ten times in one process; a test checks no thread is left.
        .executableTarget(
            name: "ThreadLifecycle",
            dependencies: [
                "LiveDeltaService", "LiveDeltaRedis", "MicroHTTP", "RedisClient", "TestSupport", "TokenAuth",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ThreadLifecycle"),
    ],
    swiftLanguageModes: [.v6]
)
