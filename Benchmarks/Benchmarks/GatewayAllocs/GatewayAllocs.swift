import Benchmark
import Foundation
import GatewayApp
import GatewayConfig
import GatewayCore
import GatewayTesting
import Logging
import MallocInterposerSwift

// Allocations per proxied request (issue 14). Each benchmark sends 1,000 sequential
// keep-alive absolute-form GETs per iteration on one connection and counts every
// malloc of this process (client, gateway and origin all run here):
//
// - "direct": the client talks to the origin itself;
// - "gateway <variant>": the same client, the same bytes, through an in-process
//   gateway started from scripts/bench/templates/gateway*.yaml at log_level info
//   (log lines formatted and written to /dev/null);
// - "... app": the same with the head a mobile app sends (10 fields, about 560
//   bytes: scripts/bench/templates/absolute-app.lua's) instead of a bare Host line,
//   so that the cost per request field shows; "direct app" is their baseline.
//
// (gateway − direct) / 1,000 is the gateway's allocations per proxied request;
// scripts/allocs.sh runs this and prints it. The client allocates nothing per request.
// Besides Benchmark's own table, each benchmark appends its exact per-iteration
// malloc counts (warm-up first) as a JSON line to $ALLOCS_RESULTS, if set.

let requestsPerIteration = 1000  // BenchmarkScalingFactor.kilo, below
let warmupIterations = 1
let bodySize = 1024

/// What a benchmark measures through, started in its setup and stopped in its teardown.
final class Rig: @unchecked Sendable {
    let upstream: TestUpstream
    let gateway: (app: GatewayApplication, run: Task<Void, any Error>)?
    let client: BlockingHTTPClient
    let workDirectory: String?
    /// Mallocs of the whole process during each iteration's requests (warm-up included).
    var mallocCounts: [Int] = []

    private init(upstream: TestUpstream, gateway: (GatewayApplication, Task<Void, any Error>)?, client: BlockingHTTPClient, workDirectory: String?) {
        self.upstream = upstream
        self.gateway = gateway
        self.client = client
        self.workDirectory = workDirectory
    }

    /// The request head the client sends.
    enum Head: Sendable {
        /// wrk's: the request line and `Host`.
        case bare
        /// A mobile app's (scripts/bench/templates/absolute-app.lua): 10 fields, a query.
        case app

        func request(port: Int) -> String {
            switch self {
            case .bare:
                return "GET http://127.0.0.1:\(port)/custom HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n"
            case .app:
                return "GET http://127.0.0.1:\(port)/custom?device=ios&build=4521 HTTP/1.1\r\n"
                    + "Host: 127.0.0.1:\(port)\r\n"
                    + "User-Agent: MyApp/4.21.0 (iPhone; iOS 17.4.1; Scale/3.00) Alamofire/5.8.1\r\n"
                    + "Accept: application/json, text/plain, */*\r\n"
                    + "Accept-Language: en-GB;q=1.0, de-DE;q=0.9, fr-FR;q=0.8\r\n"
                    + "Accept-Encoding: gzip, deflate, br\r\n"
                    + "X-Request-ID: 3f1c2a9e-7b44-4f0e-9a8c-1d2e3f4a5b6c\r\n"
                    + "X-Client-Version: 4.21.0-4521\r\n"
                    + "Cookie: session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl; theme=dark; consent=1\r\n"
                    + "Connection: keep-alive\r\n\r\n"
            }
        }
    }

    /// `template`: nil for the exchange, else a file in scripts/bench/templates.
    static func start(template: String?, head: Head) async throws -> Rig {
        let upstream = try await TestUpstream.start()
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: bodySize)
        upstream.setResponder { _ in
            TestResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: body)
        }
        // One path segment: it matches the templates' endpoint "GET /{size}".
        let request = head.request(port: upstream.port)
        guard let template else {
            let client = try BlockingHTTPClient(port: upstream.port, request: request)
            let rig = Rig(upstream: upstream, gateway: nil, client: client, workDirectory: nil)
            try rig.warmUp(expectingAuthorization: nil)
            return rig
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-allocs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let templatePath = repositoryRoot.appendingPathComponent("scripts/bench/templates/\(template)").path
        let yaml = try String(contentsOfFile: templatePath, encoding: .utf8)
            .replacingOccurrences(of: "@PROXY_PORT@", with: "0")
            .replacingOccurrences(of: "@ADMIN_PORT@", with: "0")
            .replacingOccurrences(of: "@LOG_LEVEL@", with: "info")
            .replacingOccurrences(of: "@DIR@", with: directory)
            .replacingOccurrences(of: "@ORIGIN_PORT@", with: "\(upstream.port)")
        let configPath = directory + "/gateway.yaml"
        try yaml.write(toFile: configPath, atomically: true, encoding: .utf8)
        let config = try ConfigLoader.load(path: configPath)
        var logger = Logger(label: "gateway")
        logger.logLevel = config.logLevel
        let app = GatewayApplication(config: config, configPath: configPath, logger: logger, handleSignals: false)
        let run = Task { try await app.run() }
        let proxy = try await app.proxyServer.listeningAddress()
        let client = try BlockingHTTPClient(port: proxy.port!, request: request)
        let rig = Rig(upstream: upstream, gateway: (app, run), client: client, workDirectory: directory)
        let token = config.upstreams.isEmpty ? nil : "Bearer bench-token-not-a-secret"
        try rig.warmUp(expectingAuthorization: token)
        return rig
    }

    /// A few hundred requests before measuring (connections, caches, metric handles),
    /// checking that they really were forwarded.
    private func warmUp(expectingAuthorization token: String?) throws {
        for _ in 0..<300 {
            let length = try client.get()
            guard length == bodySize else { throw BlockingHTTPClient.Failure(description: "body of \(length) bytes") }
        }
        guard upstream.requestsServed == 300, let last = upstream.receivedRequests.last else {
            throw BlockingHTTPClient.Failure(description: "the origin served \(upstream.requestsServed) of 300 requests")
        }
        if gateway != nil, last.header("Via") == nil {
            throw BlockingHTTPClient.Failure(description: "the request did not pass through the gateway")
        }
        if let token, last.header("Authorization") != token {
            throw BlockingHTTPClient.Failure(description: "the gateway did not add the bearer token")
        }
    }

    func stop() async throws {
        if let gateway {
            await gateway.app.shutdown()
            try await gateway.run.value
        }
        try await upstream.shutdown()
        if let workDirectory {
            try? FileManager.default.removeItem(atPath: workDirectory)
        }
    }
}

/// The gateway checkout: GATEWAY_ROOT, else four levels above this source file.
let repositoryRoot: URL = {
    if let root = ProcessInfo.processInfo.environment["GATEWAY_ROOT"], !root.isEmpty {
        return URL(fileURLWithPath: root)
    }
    return URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
}()

nonisolated(unsafe) var rig: Rig?

/// Appends `{"name": ..., "requests_per_iteration": ..., "warmup_iterations": ..., "malloc_counts": [...]}`
/// to the file named by $ALLOCS_RESULTS (nothing without it).
func writeResult(name: String, mallocCounts: [Int]) throws {
    guard let path = ProcessInfo.processInfo.environment["ALLOCS_RESULTS"], !path.isEmpty else { return }
    let record: [String: Any] = [
        "name": name, "requests_per_iteration": requestsPerIteration,
        "warmup_iterations": warmupIterations, "malloc_counts": mallocCounts,
    ]
    var line = try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])
    line.append(UInt8(ascii: "\n"))
    if !FileManager.default.fileExists(atPath: path) {
        FileManager.default.createFile(atPath: path, contents: nil)
    }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seekToEnd()
    try handle.write(contentsOf: line)
}

let benchmarks: @Sendable () -> Void = {
    // As `gateway run` does, with the lines going to /dev/null.
    let devNull = LogLineQueue(fileDescriptor: open("/dev/null", O_WRONLY), thread: .shared)
    LoggingSystem.bootstrap { label in
        var handler = GatewayLogHandler(label: label, queue: devNull)
        handler.logLevel = .info
        return handler
    }
    let iterations = Int(ProcessInfo.processInfo.environment["ALLOCS_ITERATIONS"] ?? "") ?? 5
    let configuration = Benchmark.Configuration(
        metrics: [.mallocCountTotal, .cpuTotal, .wallClock, .throughput],
        warmupIterations: warmupIterations,
        scalingFactor: .kilo,
        maxDuration: .seconds(300),
        maxIterations: iterations
    )
    let variants: [(name: String, template: String?, head: Rig.Head)] = [
        ("direct", nil, .bare),
        ("gateway default", "gateway.yaml", .bare),
        ("gateway policies", "gateway-policies.yaml", .bare),
        ("gateway traces", "gateway-traces.yaml", .bare),
        ("direct app", nil, .app),
        ("gateway default app", "gateway.yaml", .app),
        ("gateway policies app", "gateway-policies.yaml", .app),
    ]
    for variant in variants {
        Benchmark(variant.name, configuration: configuration) { benchmark in
            let rig = rig!
            let before = MallocInterposerSwift.getStatistics().mallocCount
            for _ in benchmark.scaledIterations {
                try rig.client.get()
            }
            rig.mallocCounts.append(MallocInterposerSwift.getStatistics().mallocCount - before)
        } setup: {
            rig = try await Rig.start(template: variant.template, head: variant.head)
        } teardown: {
            if let rig {
                try writeResult(name: variant.name, mallocCounts: rig.mallocCounts)
                try await rig.stop()
            }
            rig = nil
        }
    }
}
