import Foundation
import GatewayApp
import GatewayConfig
import GatewayCore
import GatewayTesting
import Logging
import NIOConcurrencyHelpers

/// A live gateway in this process, on loopback port 0 for both listeners, with
/// its log lines captured so tests can assert on them (and on what is absent).
final class GatewayHarness: Sendable {
    let app: GatewayApplication
    let proxyPort: Int
    let adminPort: Int
    let logs: LogCapture
    private let runTask: Task<Void, any Error>

    var proxyURL: String { "http://127.0.0.1:\(proxyPort)" }
    var adminURL: String { "http://127.0.0.1:\(adminPort)" }

    /// Starts a gateway. `configure` edits the default config (listeners on port 0).
    static func start(
        configPath: String? = nil,
        _ configure: (inout GatewayConfig) throws -> Void = { _ in }
    ) async throws -> GatewayHarness {
        var config = GatewayConfig()
        config.listen.proxy = BindAddress(host: "127.0.0.1", port: 0)
        config.listen.admin = BindAddress(host: "127.0.0.1", port: 0)
        config.limits.drainTimeout = .seconds(5)
        try configure(&config)
        let logs = LogCapture()
        var logger = Logger(label: "gateway-test") { _ in logs.handler() }
        logger.logLevel = .debug
        let app = GatewayApplication(config: config, configPath: configPath, logger: logger, handleSignals: false)
        let runTask = Task { try await app.run() }
        let proxy = try await app.proxyServer.listeningAddress()
        let admin = try await app.adminServer.listeningAddress()
        // A test may send a CONNECT to the admin port at once: the gateway must know it as its own by then.
        await app.ownListenersRecorded()
        return GatewayHarness(app: app, proxyPort: proxy.port!, adminPort: admin.port!, logs: logs, runTask: runTask)
    }

    private init(app: GatewayApplication, proxyPort: Int, adminPort: Int, logs: LogCapture, runTask: Task<Void, any Error>) {
        self.app = app
        self.proxyPort = proxyPort
        self.adminPort = adminPort
        self.logs = logs
        self.runTask = runTask
    }

    /// Graceful shutdown; waits for `run()` to return.
    func stop() async throws {
        await app.shutdown()
        try await runTask.value
    }

    /// Runs curl through the gateway (`-x`), silent, with the given arguments.
    func curl(_ arguments: [String], timeout: Duration = .seconds(30), stdin: [UInt8]? = nil) async throws -> ProcessResult {
        try await ProcessRunner.run("curl", ["-sS", "-x", proxyURL] + arguments, environment: ["NO_PROXY": "", "no_proxy": ""], stdin: stdin, timeout: timeout)
    }

    /// A raw TCP connection to the proxy port, for malformed requests.
    func rawConnection() async throws -> RawTCPClient {
        try await RawTCPClient.connect(host: "127.0.0.1", port: proxyPort)
    }
}

/// Collects log lines (level, message, metadata) from a gateway under test.
final class LogCapture: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])

    func handler() -> ClosureLogHandler {
        ClosureLogHandler { [self] event, metadata in
            let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            append("\(event.level) \(event.message) \(fields)")
        }
    }

    func append(_ line: String) { lines.withLockedValue { $0.append(line) } }

    var all: [String] { lines.withLockedValue { $0 } }
    var text: String { all.joined(separator: "\n") }
}

