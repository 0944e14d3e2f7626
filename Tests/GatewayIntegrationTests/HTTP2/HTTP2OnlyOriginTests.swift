import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// A plain HTTP/1.1 client reaches an HTTP/2-only origin (nghttpd, from
/// Debian's nghttp2-server) through the gateway, which originates TLS with
/// ALPN `h2`: 60 concurrent requests share at most 2 upstream connections, and
/// each carries the injected credential.
@Suite(.timeLimit(.minutes(3)))
struct HTTP2OnlyOriginTests {
    static let token = Secret(source: .env("H2_TOKEN"), value: "h2-only-S3cret")

    @Test func sixtyConcurrentRequestsUseAtMostTwoUpstreamConnections() async throws {
        let pki = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-nghttpd")
        let paths = try pki.write(to: dir)
        try FileManager.default.createDirectory(atPath: "\(dir)/htdocs", withIntermediateDirectories: true)
        try Data("hello over h2\n".utf8).write(to: URL(fileURLWithPath: "\(dir)/htdocs/hello.txt"))
        let port = try freeLoopbackPort()

        let nghttpd = Process()
        nghttpd.executableURL = URL(fileURLWithPath: try #require(which("nghttpd"), "nghttpd (Debian's nghttp2-server) is installed by .ci/run"))
        nghttpd.arguments = ["-v", "-d", "\(dir)/htdocs", "\(port)", paths.leafKey, paths.serverChain]
        FileManager.default.createFile(atPath: "\(dir)/nghttpd.log", contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(dir)/nghttpd.log"))
        nghttpd.standardOutput = log
        nghttpd.standardError = log
        try ProcessRunner.launch(nghttpd)
        defer { nghttpd.terminate() }
        for _ in 0..<100 {
            let ready = try await ProcessRunner.run("curl", ["-s", "-o", "/dev/null", "--cacert", paths.caBundle, "https://localhost:\(port)/hello.txt"])
            if ready.status == 0 { break }
            try await Task.sleep(for: .milliseconds(50))
        }

        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [UpstreamConfig(
                name: "h2only", hosts: [HostPattern("h2only.test")!],
                origin: UpstreamOrigin(scheme: .https, host: "localhost", port: port),
                tls: UpstreamTLSSettings(caFile: paths.caBundle),
                auth: AuthConfig(kind: .bearer(token: Self.token)), httpVersion: .auto
            )]
        }
        defer { Task { try? await gateway.stop() } }

        let urls = (1...60).flatMap { ["-o", "/dev/null", "http://h2only.test/hello.txt?n=\($0)"] }
        let result = try await gateway.curl(
            ["--http1.1", "--parallel", "--parallel-immediate", "--parallel-max", "60", "-w", "%{http_version} %{response_code} %{size_download}\n"] + urls,
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.stderrString)\n\(gateway.logs.text)")
        let lines = result.stdoutString.split(separator: "\n")
        #expect(lines.count == 60)
        #expect(lines.allSatisfy { $0 == "1.1 200 14" }, "\(result.stdoutString)")

        let served = try String(contentsOfFile: "\(dir)/nghttpd.log", encoding: .utf8)
        // nghttpd -v tags each line with its connection: `[id=N]`.
        let connections = Set(served.split(separator: "\n").compactMap { line -> Substring? in
            guard let start = line.range(of: "[id="), let end = line[start.upperBound...].firstIndex(of: "]") else { return nil }
            return line[start.upperBound..<end]
        })
        // The readiness probe made connections of its own before the gateway started.
        let probes = served.components(separatedBy: "user-agent: curl").count - 1 - 60
        #expect(connections.count - probes <= 2, "60 requests on at most 2 upstream connections: \(connections.count) connections, \(probes) probes")
        let credentials = served.components(separatedBy: "authorization: Bearer \(Self.token.value)").count - 1
        #expect(credentials == 60, "each request carried the credential")
        let metrics = try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/metrics"]).stdoutString
        #expect(metrics.contains("gateway_requests_by_protocol_total{upstream=\"h2only\",client_protocol=\"http/1.1\",upstream_protocol=\"h2\"} 60"), "\(metrics)")
        #expect(metrics.contains("gateway_upstream_connections_open{protocol=\"h2\"}"), "\(metrics)")
    }
}
