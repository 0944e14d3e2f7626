// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// How the release executable is linked on Linux (the Dockerfile's build, and the
/// benchmark's): with the toolchain's lld, relative relocations packed (DT_RELR,
/// glibc 2.36+: the runtime image is Debian 12) and no symbol table exported for
/// dynamic linking (`--static-swift-stdlib` asks for one; nothing loads against
/// the gateway). The loader no longer reads 3 MB of relocation entries and 1 MB
/// of exported symbols at every start: about 3 MiB less resident memory, idle.
let releaseLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(
        ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"],
        .when(platforms: [.linux], configuration: .release)
    ),
]

let package = Package(
    name: "gateway",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "gateway", targets: ["gateway"]),
        // For the separate Benchmarks/ package (which depends on this one by path); not used by the build here.
        .library(name: "GatewayKit", targets: ["GatewayApp", "GatewayConfig", "GatewayCore", "GatewayTesting"]),
        // For the separate Fuzz/ package: the properties its fuzz targets check.
        .library(name: "GatewayFuzzing", targets: ["GatewayFuzzing"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        .target(
            name: "GatewayCore",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatewayConfig",
            dependencies: [
                "GatewayCore",
                .product(name: "Yams", package: "Yams"),
                // tls.client_certificate: the chain and key are parsed and matched when the config loads.
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatewayUpstream",
            dependencies: [
                "GatewayCore",
                "GatewayConfig",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatewayPolicies",
            dependencies: [
                "GatewayCore",
                "GatewayConfig",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatewayObservability",
            dependencies: [
                "GatewayCore",
                "GatewayConfig",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatewayListener",
            dependencies: [
                "GatewayCore",
                "GatewayConfig",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Tokens and rate limits shared by several gateways, in PostgreSQL (`shared_state`).
        .target(
            name: "GatewaySharedState",
            dependencies: [
                "GatewayCore",
                "GatewayConfig",
                "GatewayPolicies",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // W3C trace context and OpenTelemetry spans, with the gateway's own OTLP/HTTP protobuf exporter.
        .target(
            name: "GatewayTracing",
            dependencies: [
                "GatewayCore",
                "GatewayConfig",
                "GatewayObservability",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatewayApp",
            dependencies: [
                "GatewayCore",
                "GatewayConfig",
                "GatewayListener",
                "GatewayUpstream",
                "GatewayPolicies",
                "GatewayObservability",
                "GatewaySharedState",
                "GatewayTracing",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "gateway",
            dependencies: ["GatewayApp"],
            swiftSettings: swiftSettings,
            linkerSettings: releaseLinkerSettings
        ),
        .target(
            name: "GatewayTesting",
            dependencies: [
                "GatewayCore",
                "GatewayPolicies",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        // The properties the fuzz targets of Fuzz/ check; the corpus replays through them in GatewayFuzzingTests.
        .target(
            name: "GatewayFuzzing",
            dependencies: [
                "GatewayCore",
                "GatewayConfig",
                "GatewayListener",
                "GatewayObservability",
                "GatewayUpstream",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayFuzzingTests",
            dependencies: [
                "GatewayFuzzing", "GatewayListener", "GatewayObservability",
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayCoreTests",
            dependencies: [
                "GatewayCore",
                // FileModes: the process umask changed by one test at a time, whichever target it is in.
                "GatewayTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayConfigTests",
            // GatewayTesting: HostSamples, the random hosts and patterns of the index property tests.
            dependencies: ["GatewayConfig", "GatewayCore", "GatewayTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayUpstreamTests",
            dependencies: [
                "GatewayUpstream", "GatewayCore", "GatewayConfig", "GatewayTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayListenerTests",
            dependencies: [
                "GatewayListener", "GatewayCore", "GatewayConfig", "GatewayTesting",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayObservabilityTests",
            dependencies: ["GatewayObservability", "GatewayCore", "GatewayConfig", "GatewayTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayTracingTests",
            dependencies: [
                "GatewayTracing", "GatewayCore", "GatewayConfig", "GatewayObservability", "GatewayTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayPoliciesTests",
            dependencies: [
                "GatewayPolicies", "GatewayCore", "GatewayConfig", "GatewayTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewaySharedStateTests",
            dependencies: [
                "GatewaySharedState", "GatewayPolicies", "GatewayCore", "GatewayConfig", "GatewayTesting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // GatewayTesting's own tests: its loopback upstreams, raw TCP clients and process runner.
        .testTarget(
            name: "GatewayTestingTests",
            dependencies: [
                "GatewayTesting",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayIntegrationTests",
            dependencies: [
                "GatewayApp", "GatewayCore", "GatewayConfig", "GatewayTesting",
                "GatewayUpstream", "GatewayListener", "GatewayObservability",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
