import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// Upstreams that ask for a client certificate (mutual TLS): `openssl s_server
/// -Verify 1` over HTTP/1.1 and `nghttpd --verify-client` over HTTP/2. Without
/// `tls.client_certificate` the origin ends the handshake; with it the request
/// is served; a certificate of another CA is refused by the origin.
@Suite(.timeLimit(.minutes(2)))
struct UpstreamClientCertificateTests {
    struct Fixture {
        var dir: String
        /// The origin's server PKI (the gateway trusts its root as ca_file).
        var server: TestCertificates.Paths
        /// The client PKI the origin trusts (its root is `-CAfile`).
        var clientPKI: TestCertificates
        var clientCA: String
        var client: UpstreamClientCertificate
    }

    func fixture() throws -> Fixture {
        let files = try MutualTLSFiles(prefix: "gateway-mtls")
        let client = try ClientCertificateLoader.load(certificateFile: files.clientFiles.chain, keyFile: files.clientFiles.key)
        return Fixture(dir: files.dir, server: files.server, clientPKI: files.clientPKI, clientCA: files.clientCA, client: client)
    }

    func upstream(port: Int, caFile: String, client: UpstreamClientCertificate?, httpVersion: UpstreamHTTPVersion = .auto) -> UpstreamConfig {
        UpstreamConfig(
            name: "bank", hosts: [HostPattern("bank.test")!],
            origin: UpstreamOrigin(scheme: .https, host: "localhost", port: port),
            tls: UpstreamTLSSettings(caFile: caFile, clientCertificate: client), httpVersion: httpVersion)
    }

    @Test func httpOneOriginServesOnlyWithTheClientCertificate() async throws {
        let f = try fixture()
        let origin = try await ExternalTLSOrigin.opensslRequiringClientCertificate(f.server, clientCA: f.clientCA, in: f.dir)
        defer { origin.stop() }

        // Without a client certificate: the origin ends the handshake; the gateway answers 502 with its own error.
        let without = try await GatewayHarness.start { $0.upstreams = [upstream(port: origin.port, caFile: f.server.caBundle, client: nil)] }
        let refused = try await without.curl(["-i", "http://bank.test/"])
        try await without.stop()
        let refusedResponse = try #require(RawResponse(refused.stdout), "\(refused.stderrString)")
        #expect(refusedResponse.status == 502, "\(refusedResponse.bodyText)")
        #expect(refusedResponse.header("X-Gateway-Error") == "tls_handshake_failed", "\(refusedResponse.bodyText)")
        #expect(refusedResponse.bodyText.contains("client certificate"))
        #expect(refusedResponse.header("Content-Type")?.hasPrefix("application/json") == true)

        // With it: served, and the origin saw the client certificate.
        let with = try await GatewayHarness.start { $0.upstreams = [upstream(port: origin.port, caFile: f.server.caBundle, client: f.client)] }
        defer { Task { try? await with.stop() } }
        let served = try await with.curl(["-i", "http://bank.test/"])
        let response = try #require(RawResponse(served.stdout), "\(served.stderrString)")
        #expect(response.status == 200, "\(response.bodyText)\n\(with.logs.text)")
        #expect(response.bodyText.contains("Client certificate"), "s_server -www shows the certificate it got")
        #expect(response.bodyText.contains("gateway-test-client"))
        #expect(!with.logs.text.contains("PRIVATE KEY"))

        let metrics = try await ProcessRunner.run("curl", ["-s", "\(with.adminURL)/metrics"]).stdoutString
        let expiry = Int(f.client.notValidAfter.timeIntervalSince1970.rounded())
        #expect(metrics.contains("gateway_upstream_client_certificate_expiry_seconds{upstream=\"bank\"} \(expiry)"), "\(metrics)")
    }

    @Test func aCertificateOfAnotherCAIsRefusedByTheOrigin() async throws {
        let f = try fixture()
        let origin = try await ExternalTLSOrigin.opensslRequiringClientCertificate(f.server, clientCA: f.clientCA, in: f.dir)
        defer { origin.stop() }
        let otherPKI = try TestCertificates()
        let otherPaths = try otherPKI.writeClientCertificate(try otherPKI.makeClientCertificate(commonName: "stranger"), to: "\(f.dir)/other")
        let other = try ClientCertificateLoader.load(certificateFile: otherPaths.chain, keyFile: otherPaths.key)

        let gateway = try await GatewayHarness.start { $0.upstreams = [upstream(port: origin.port, caFile: f.server.caBundle, client: other)] }
        defer { Task { try? await gateway.stop() } }
        let result = try await gateway.curl(["-i", "http://bank.test/"])
        let response = try #require(RawResponse(result.stdout), "\(result.stderrString)")
        #expect(response.status == 502, "\(response.bodyText)")
        #expect(response.header("X-Gateway-Error") == "tls_handshake_failed", "\(response.bodyText)")
        #expect(!response.bodyText.contains("Client certificate"))
    }

    @Test func httpTwoOriginServesWithTheClientCertificateOverH2() async throws {
        let f = try fixture()
        let htdocs = "\(f.dir)/htdocs"
        try FileManager.default.createDirectory(atPath: htdocs, withIntermediateDirectories: true)
        try Data("hello mtls h2\n".utf8).write(to: URL(fileURLWithPath: "\(htdocs)/hello.txt"))
        let origin = try await ExternalTLSOrigin.nghttpdRequiringClientCertificate(f.server, htdocs: htdocs, in: f.dir)
        defer { origin.stop() }

        let without = try await GatewayHarness.start { $0.upstreams = [upstream(port: origin.port, caFile: f.server.caBundle, client: nil, httpVersion: .http2)] }
        let refused = try await without.curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://bank.test/hello.txt"])
        try await without.stop()
        #expect(refused.stdoutString == "502")

        let gateway = try await GatewayHarness.start { $0.upstreams = [upstream(port: origin.port, caFile: f.server.caBundle, client: f.client, httpVersion: .http2)] }
        defer { Task { try? await gateway.stop() } }
        let urls = (1...5).flatMap { ["-o", "/dev/null", "http://bank.test/hello.txt?n=\($0)"] }
        let served = try await gateway.curl(["-w", "%{response_code} %{size_download}\n"] + urls)
        #expect(served.stdoutString.split(separator: "\n") == Array(repeating: "200 14", count: 5), "\(served.stderrString)\n\(gateway.logs.text)")
        let metrics = try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/metrics"]).stdoutString
        #expect(metrics.contains("gateway_requests_by_protocol_total{upstream=\"bank\",client_protocol=\"http/1.1\",upstream_protocol=\"h2\"} 5"), "\(metrics)")
        #expect(metrics.contains("gateway_upstream_connections_open{protocol=\"h2\"} 1"), "one pooled h2 connection: \(metrics)")
    }

    @Test func aReloadReadsReplacedCertificateFilesAgain() async throws {
        let f = try fixture()
        let origin = try await ExternalTLSOrigin.opensslRequiringClientCertificate(f.server, clientCA: f.clientCA, in: f.dir)
        defer { origin.stop() }
        // The files first hold a certificate of another CA, which the origin refuses.
        let otherPKI = try TestCertificates()
        let files = try otherPKI.writeClientCertificate(try otherPKI.makeClientCertificate(commonName: "stranger"), to: "\(f.dir)/live")
        let configPath = "\(f.dir)/gateway.yaml"
        try """
            upstreams:
              - name: bank
                hosts: [bank.test]
                origin: https://localhost:\(origin.port)
                tls:
                  ca_file: \(f.server.caBundle)
                  client_certificate:
                    certificate_file: live/client-chain.pem
                    key_file: live/client-key.pem
            """.write(toFile: configPath, atomically: true, encoding: .utf8)
        let loaded = try ConfigLoader.load(path: configPath, environment: [:])
        let gateway = try await GatewayHarness.start(configPath: configPath) { config in
            let listen = config.listen
            config = loaded
            config.listen = listen
        }
        defer { Task { try? await gateway.stop() } }
        let before = try await gateway.curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://bank.test/"])
        #expect(before.stdoutString == "502")

        // The right certificate written over the same files, then a reload.
        let good = try f.clientPKI.writeClientCertificate(try f.clientPKI.makeClientCertificate(commonName: "renewed"), to: "\(f.dir)/live")
        #expect(good.chain == files.chain)
        #expect(gateway.app.reload(), "\(gateway.logs.text)")
        let after = try await gateway.curl(["-s", "http://bank.test/"])
        #expect(after.stdoutString.contains("renewed"), "\(after.stdoutString.prefix(300))\n\(gateway.logs.text)")
    }
}
