import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// The onboarding site at `http://gateway.invalid/`, served by the proxy to its
/// own clients after proxy authentication: the page (with the CA's
/// fingerprint), the CA as PEM and DER, and an iOS profile whose payload is the
/// CA byte for byte (read back with Python's plistlib).
@Suite(.timeLimit(.minutes(2)))
struct DeviceOnboardingTests {
    static let password = Secret(source: .env("GATEWAY_PHONE_PASSWORD"), value: "phone-S3cret")

    func start(intercept: Bool = true) async throws -> (GatewayHarness, stateDir: String) {
        let stateDir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-onboarding") + "/state"
        let gateway = try await GatewayHarness.start { config in
            config.proxyAuth = ProxyAuthConfig(realm: "gateway", users: [ProxyUser(username: "phone", password: Self.password)])
            config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.example.com")!], intercept: intercept)]
            config.interception = InterceptionConfig(stateDir: stateDir)
            // The onboarding site answers whatever hosts access allows.
            config.access.allow = [HostPattern("api.example.com")!]
        }
        return (gateway, stateDir)
    }

    func get(_ gateway: GatewayHarness, _ path: String, auth: Bool = true, output: String? = nil) async throws -> ProcessResult {
        var arguments = ["-i"]
        if auth { arguments += ["--proxy-user", "phone:\(Self.password.value)"] }
        if let output { arguments = ["-o", output, "-D", "-"] + (auth ? ["--proxy-user", "phone:\(Self.password.value)"] : []) }
        return try await gateway.curl(arguments + ["http://gateway.invalid\(path)"])
    }

    @Test func pageAndDownloadsThroughTheProxyWithProxyAuthentication() async throws {
        let (gateway, stateDir) = try await start()
        defer { Task { try? await gateway.stop() } }
        let caPEM = try String(contentsOfFile: "\(stateDir)/ca.pem", encoding: .utf8)
        let fingerprint = try await ProcessRunner.run("openssl", ["x509", "-noout", "-fingerprint", "-sha256", "-in", "\(stateDir)/ca.pem"])
            .stdoutString.split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? "?"

        let page = try #require(RawResponse(try await get(gateway, "/").stdout))
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.bodyText.contains(fingerprint), "the page shows the fingerprint openssl computes: \(fingerprint)")
        #expect(page.bodyText.contains("network_security_config"))
        #expect(page.bodyText.contains("Certificate Trust Settings"))
        #expect(page.bodyText.contains("href=\"/gateway.mobileconfig\""))

        let pem = try #require(RawResponse(try await get(gateway, "/ca.pem").stdout))
        #expect(pem.status == 200)
        #expect(pem.header("Content-Type") == "application/x-pem-file")
        #expect(pem.bodyText == caPEM)

        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-onboarding-dl")
        let crtHead = try await get(gateway, "/ca.crt", output: "\(dir)/ca.crt")
        #expect(crtHead.stdoutString.contains("Content-Type: application/x-x509-ca-cert"), "\(crtHead.stdoutString)")
        let der = try await ProcessRunner.run("openssl", ["x509", "-inform", "DER", "-in", "\(dir)/ca.crt", "-noout", "-fingerprint", "-sha256"])
        #expect(der.stdoutString.contains(fingerprint), "\(der.stdoutString) \(der.stderrString)")

        let profileHead = try await get(gateway, "/gateway.mobileconfig", output: "\(dir)/gateway.mobileconfig")
        #expect(profileHead.stdoutString.contains("Content-Type: application/x-apple-aspen-config"), "\(profileHead.stdoutString)")
        // plistlib reads the profile; its one payload is a root certificate equal to the CA's DER.
        let check = """
            import plistlib, subprocess, sys
            profile = plistlib.load(open(sys.argv[1], 'rb'))
            der = open(sys.argv[2], 'rb').read()
            assert profile['PayloadType'] == 'Configuration', profile['PayloadType']
            payloads = profile['PayloadContent']
            assert len(payloads) == 1
            assert payloads[0]['PayloadType'] == 'com.apple.security.root'
            assert payloads[0]['PayloadContent'] == der, 'payload differs from the CA'
            assert sys.argv[3][:11] in profile['PayloadDisplayName'], profile['PayloadDisplayName']
            print('ok', profile['PayloadDisplayName'])
            """
        let parsed = try await ProcessRunner.run("python3", ["-c", check, "\(dir)/gateway.mobileconfig", "\(dir)/ca.crt", fingerprint])
        #expect(parsed.status == 0, "\(parsed.stdoutString) \(parsed.stderrString)")
        #expect(parsed.stdoutString.hasPrefix("ok Gateway interception CA"), "\(parsed.stdoutString)")
    }

    @Test func refusedWithoutProxyAuthentication() async throws {
        let (gateway, _) = try await start()
        defer { Task { try? await gateway.stop() } }
        for path in ["/", "/ca.pem", "/gateway.mobileconfig"] {
            let response = try #require(RawResponse(try await get(gateway, path, auth: false).stdout))
            #expect(response.status == 407, "\(path)")
            #expect(!response.bodyText.contains("BEGIN CERTIFICATE"))
        }
    }

    @Test func withoutInterceptionThePageSaysSoAndTheDownloadsAre404() async throws {
        let (gateway, _) = try await start(intercept: false)
        defer { Task { try? await gateway.stop() } }
        let page = try #require(RawResponse(try await get(gateway, "/").stdout))
        #expect(page.status == 200)
        #expect(page.bodyText.contains("no CA to"))
        let pem = try #require(RawResponse(try await get(gateway, "/ca.pem").stdout))
        #expect(pem.status == 404)
        #expect(pem.header("X-Gateway-Error") == "not_found")
        #expect(pem.header("Content-Type") == "application/json")
    }
}
