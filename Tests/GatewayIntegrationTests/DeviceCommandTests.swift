import Foundation
import GatewayTesting
import Testing

/// `gateway device` (the real binary): LAN addresses and port when the proxy
/// listens beyond loopback with proxy authentication; advice that always
/// includes proxy_auth when it listens on loopback only. And `check-config`
/// showing a client certificate's subject and expiry.
@Suite(.timeLimit(.minutes(2)))
struct DeviceCommandTests {
    func run(_ yaml: String, _ command: [String] = ["device"], environment: [String: String] = [:]) async throws -> ProcessResult {
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-device")
        let path = "\(dir)/gateway.yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return try await ProcessRunner.run(
            GatewayProcess.executableURL.path, command + ["-c", path], environment: environment, timeout: .seconds(30))
    }

    @Test func loopbackListenerGetsAdviceThatIncludesProxyAuth() async throws {
        let result = try await run("listen:\n  proxy: 127.0.0.1:18080\n")
        #expect(result.status == 1)
        let out = result.stdoutString
        #expect(out.contains("127.0.0.1:18080 (loopback)"), "\(out)")
        #expect(out.contains("proxy: 0.0.0.0:18080"))
        #expect(out.contains("proxy_auth:"), "never a LAN listener without proxy_auth: \(out)")
        #expect(!out.contains("open: true"))
    }

    @Test func lanListenerWithProxyAuthListsAddressesPortAndTheOnboardingURL() async throws {
        let yaml = """
            listen:
              proxy: 0.0.0.0:18081
            proxy_auth:
              users:
                - username: phone
                  password_env: GATEWAY_DEVICE_TEST_PASSWORD
            """
        // The password is not read: device needs only names and addresses.
        let result = try await run(yaml)
        let out = result.stdoutString
        #expect(result.status == 0, "\(out) \(result.stderrString)")
        #expect(out.contains("port 18081"), "\(out)")
        #expect(out.contains("authentication: on; user phone"))
        #expect(out.contains("http://gateway.invalid/"))
        #expect(!out.contains("127.0.0.1"), "loopback is no address for a phone")
    }

    @Test func openLANListenerSaysAuthenticationIsOff() async throws {
        let result = try await run("open: true\nlisten:\n  proxy: 0.0.0.0:18082\n")
        #expect(result.stdoutString.contains("authentication: OFF"), "\(result.stdoutString)")
    }

    @Test func checkConfigShowsTheClientCertificatesSubjectAndExpiry() async throws {
        let pki = try TestCertificates()
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-check-mtls")
        let paths = try pki.writeClientCertificate(try pki.makeClientCertificate(commonName: "ledger-client", validFor: 3 * 86400 + 6 * 3600), to: dir)
        let yaml = """
            upstreams:
              - name: ledger
                hosts: [ledger.example.com]
                tls:
                  client_certificate:
                    certificate_file: \(paths.chain)
                    key_file: \(paths.key)
            """
        let result = try await run(yaml, ["check-config"])
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(result.stderrString.contains("upstreams[0].tls.client_certificate: CN=ledger-client"), "\(result.stderrString)")
        // 3 days and 6 hours: "in 3 days" whether the days are rounded or cut (exactly 3 days read 2 or 3 by the second it ran).
        #expect(result.stderrString.contains("(in 3 days)"), "\(result.stderrString)")
        #expect(result.stderrString.contains("warning: upstreams[0].tls.client_certificate: the client certificate"), "\(result.stderrString)")
        #expect(!result.stdoutString.contains("PRIVATE KEY") && !result.stderrString.contains("PRIVATE KEY"))
    }
}
