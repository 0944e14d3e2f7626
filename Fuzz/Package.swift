// swift-tools-version: 6.1
// Fuzz targets of the gateway (issue 15): libFuzzer executables, a package of its
// own so the gateway's build and CI never build them with sanitizers. The
// properties each checks live in the root package's GatewayFuzzing target (the
// main test suite replays Corpus/ through them). Run scripts/fuzz.sh.
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name (the checkout's, not "gateway").
let gatewayIdentity = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

let targets = ["FuzzTargetParser", "FuzzHeadValidation", "FuzzPathNormalizer", "FuzzConfigDecoding", "FuzzShellQuoting", "FuzzResponseFraming", "FuzzHTTP2Frames"]

let package = Package(
    name: "gateway-fuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
    ],
    targets: targets.map { name in
        .executableTarget(
            name: name,
            dependencies: ["FuzzDriver", .product(name: "GatewayFuzzing", package: gatewayIdentity)],
            path: "Sources/\(name)"
        )
    } + [
        // Starts libFuzzer from main.swift (LLVMFuzzerRunDriver).
        .target(name: "FuzzDriver", path: "Sources/FuzzDriver"),
    ]
)
