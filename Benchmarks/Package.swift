// swift-tools-version: 6.1
// Allocation benchmarks of the gateway (issue 14): a package of its own, so the
// gateway's build and CI never build ordo-one/benchmark. Run scripts/allocs.sh, or
//   cd Benchmarks && swift package --scratch-path .build-bench --disable-sandbox benchmark
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name (the checkout's, not "gateway").
let gatewayIdentity = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "gateway-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "GatewayAllocs",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "GatewayKit", package: gatewayIdentity),
                .product(name: "Logging", package: "swift-log"),
                // The same counters Benchmark's malloc metrics read, for exact totals in scripts/allocs.sh.
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ],
            path: "Benchmarks/GatewayAllocs",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
        // What the two floors share: the listener and the upstream connection.
        .target(
            name: "FloorSupport",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/FloorSupport"
        ),
        // The floor of the gateway's design (NIOHTTP1 on both sides, nothing else), measured by scripts/bench.sh.
        .executableTarget(
            name: "NIOProxyFloor",
            dependencies: [
                "FloorSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/NIOProxyFloor"
        ),
        // The floor of a gateway framing HTTP/1 itself: NIO channels moving ByteBuffers, no HTTP codec.
        .executableTarget(
            name: "NIOByteFloor",
            dependencies: [
                "FloorSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/NIOByteFloor"
        ),
        // The HTTP/2 load client of scripts/bench.sh's HTTP/2 rows (issue 37): CONNECT through a
        // proxy (or --direct), TLS with ALPN h2, S streams busy on each of C connections.
        .executableTarget(
            name: "H2ProxyLoad",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            path: "Benchmarks/H2ProxyLoad"
        ),
    ]
)
