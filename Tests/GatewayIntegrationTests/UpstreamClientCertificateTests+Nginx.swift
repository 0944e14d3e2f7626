import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// nginx with `ssl_verify_client on` as the origin, over HTTP/1.1 and HTTP/2.
/// Unlike s_server and nghttpd, nginx completes the handshake without a
/// certificate (or with one it does not trust) and answers 400 itself: the
/// gateway passes that answer on as the origin's (its status, its body,
/// no `X-Gateway-Error`), and serves the request once the upstream has the
/// right `tls.client_certificate`.
extension UpstreamClientCertificateTests {
    @Test(arguments: [UpstreamHTTPVersion.http1, .http2])
    func nginxVerifyingClientsServesOnlyTheTrustedCertificate(_ version: UpstreamHTTPVersion) async throws {
        let f = try fixture()
        let origin = try await ExternalTLSOrigin.nginxRequiringClientCertificate(f.server, clientCA: f.clientCA, in: f.dir, http2: version == .http2)
        defer { origin.stop() }
        let otherPKI = try TestCertificates()
        let otherPaths = try otherPKI.writeClientCertificate(try otherPKI.makeClientCertificate(commonName: "stranger"), to: "\(f.dir)/other")
        let other = try ClientCertificateLoader.load(certificateFile: otherPaths.chain, keyFile: otherPaths.key)
        let served = version == .http2 ? "served HTTP/2.0 to " : "served HTTP/1.1 to "

        func get(_ client: UpstreamClientCertificate?) async throws -> (RawResponse, String) {
            let gateway = try await GatewayHarness.start {
                $0.upstreams = [upstream(port: origin.port, caFile: f.server.caBundle, client: client, httpVersion: version)]
            }
            let result = try await gateway.curl(["-i", "http://bank.test/account"])
            let logs = gateway.logs.text
            try await gateway.stop()
            let response = try #require(RawResponse(result.stdout), "\(result.stderrString)\n\(logs)")
            #expect(!logs.contains("PRIVATE KEY"))
            return (response, logs)
        }

        // No certificate: nginx's own 400, passed on as the origin's answer.
        let (refused, refusedLogs) = try await get(nil)
        #expect(refused.status == 400, "\(refused.bodyText)\n\(refusedLogs)\n\(origin.log)")
        #expect(refused.bodyText.contains("No required SSL certificate was sent"), "\(refused.bodyText)")
        #expect(refused.header("Server")?.hasPrefix("nginx") == true)
        #expect(refused.header("X-Gateway-Error") == nil, "the origin answered: not a gateway error")

        // The trusted certificate: served, and nginx names its subject.
        let (ok, okLogs) = try await get(f.client)
        #expect(ok.status == 200, "\(ok.bodyText)\n\(okLogs)\n\(origin.log)")
        #expect(ok.bodyText.hasPrefix(served), "\(ok.bodyText)")
        #expect(ok.bodyText.contains("CN=gateway-test-client"), "\(ok.bodyText)")

        // A certificate of another CA: nginx's 400 for a certificate it does not trust.
        let (wrong, wrongLogs) = try await get(other)
        #expect(wrong.status == 400, "\(wrong.bodyText)\n\(wrongLogs)\n\(origin.log)")
        #expect(wrong.bodyText.contains("The SSL certificate error"), "\(wrong.bodyText)")
        #expect(!wrong.bodyText.contains("stranger"))
        #expect(origin.log.contains("client SSL certificate verify error"), "\(origin.log)")
    }
}
