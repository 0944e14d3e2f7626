import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// Foundation's `URLSession`, compiled into a small client at test time and run
/// against the gateway. On Linux (swift-corelibs-foundation, libcurl underneath)
/// URLSession takes its proxy from `http_proxy` / `https_proxy`;
/// `connectionProxyDictionary` is only honoured on Apple platforms.
@Suite(.timeLimit(.minutes(3)))
struct URLSessionClientTests {
    static let client = """
        import Foundation
        #if canImport(FoundationNetworking)
        import FoundationNetworking
        #endif
        let config = URLSessionConfiguration.ephemeral
        #if !os(Linux)
        let proxy = URL(string: ProcessInfo.processInfo.environment["http_proxy"]!)!
        config.connectionProxyDictionary = ["HTTPEnable": 1, "HTTPProxy": proxy.host!, "HTTPPort": proxy.port!]
        #endif
        let session = URLSession(configuration: config)
        var request = URLRequest(url: URL(string: CommandLine.arguments[1])!)
        request.httpMethod = "POST"
        request.httpBody = Data("from-urlsession".utf8)
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: request) { data, response, error in
            if let error { print("error: \\(error)") }
            print((response as? HTTPURLResponse)?.statusCode ?? -1)
            print(String(decoding: data ?? Data(), as: UTF8.self))
            done.signal()
        }.resume()
        done.wait()
        """

    @Test func urlSessionGoesThroughTheGatewayAndGetsAuthInjected() async throws {
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-urlsession")
        try Self.client.write(toFile: "\(dir)/main.swift", atomically: true, encoding: .utf8)
        let build = try await ProcessRunner.run("swiftc", ["-o", "\(dir)/client", "\(dir)/main.swift"], timeout: .seconds(150))
        try #require(build.status == 0, "\(build.stderrString)")

        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [UpstreamConfig(
                name: "api", hosts: [HostPattern("api.test")!],
                origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: upstream.port),
                auth: AuthConfig(kind: .bearer(token: Secret(source: .env("API_TOKEN"), value: "urlsession-token")))
            )]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let result = try await ProcessRunner.run(
            "\(dir)/client", ["http://api.test/echo?client=urlsession"],
            environment: ["http_proxy": gateway.proxyURL, "HTTP_PROXY": gateway.proxyURL, "NO_PROXY": "", "no_proxy": ""],
            timeout: .seconds(30)
        )
        #expect(result.status == 0, "\(result.stderrString)")
        let lines = result.stdoutString.split(separator: "\n", maxSplits: 1).map(String.init)
        try #require(lines.count == 2, "\(result.stdoutString)")
        #expect(lines[0] == "200")
        let echo = try JSONDecoder().decode(EchoReply.self, from: Data(lines[1].utf8))
        #expect(echo.target == "/echo?client=urlsession")
        #expect(echo.values("Authorization") == ["Bearer urlsession-token"])
        #expect(upstream.receivedRequests.last?.body == Array("from-urlsession".utf8))
    }
}
