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
    ]
)
