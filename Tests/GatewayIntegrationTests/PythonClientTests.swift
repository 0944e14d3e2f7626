import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// Python `requests` with the proxy settings users copy from the README.
@Suite(.timeLimit(.minutes(2)))
struct PythonClientTests {
    @Test func requestsThroughHttpAndHttpsProxies() async throws {
        let certificates = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let paths = try certificates.write(to: try TestCertificates.makeTemporaryDirectory())
        let plain = try await TestUpstream.start()
        let tls = try await TestUpstream.start(tls: try certificates.makeServerContext())
        let gateway = try await GatewayHarness.start { $0.access.connectPorts = [tls.port] }
        defer { Task { try? await gateway.stop(); try? await plain.shutdown(); try? await tls.shutdown() } }

        let script = """
            import json, os, requests
            proxies = {"http": os.environ["PROXY"], "https": os.environ["PROXY"]}
            a = requests.get(os.environ["PLAIN"] + "/echo?from=python", proxies=proxies, timeout=20)
            b = requests.post(os.environ["TLS"] + "/echo", data=b"payload", proxies=proxies, verify=os.environ["CA"], timeout=20)
            print(json.dumps([a.status_code, a.json()["target"], b.status_code, b.json()["body_length"]]))
            """
        let result = try await ProcessRunner.run(
            "python3", ["-c", script],
            environment: [
                "PROXY": gateway.proxyURL, "PLAIN": plain.baseURL, "CA": paths.caBundle,
                "TLS": "https://localhost:\(tls.port)", "NO_PROXY": "", "no_proxy": "",
            ]
        )
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(result.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines) == #"[200, "/echo?from=python", 200, 7]"#)
    }

    /// An unmodified HTTPS client (Python requests with HTTPS_PROXY and the
    /// exported CA as REQUESTS_CA_BUNDLE) gets auth injection through interception.
    @Test func requestsWithHTTPSProxyAndTheExportedCAGetsAuthInjected() async throws {
        let certificates = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let dir = try TestCertificates.makeTemporaryDirectory()
        let paths = try certificates.write(to: dir)
        let tls = try await TestUpstream.start(tls: try certificates.makeServerContext())
        let gateway = try await GatewayHarness.start { config in
            config.access.connectPorts = [tls.port]
            config.interception = InterceptionConfig(stateDir: "\(dir)/state")
            config.upstreams = [UpstreamConfig(
                name: "api", hosts: [HostPattern("localhost")!], ports: [tls.port], tls: UpstreamTLSSettings(caFile: paths.caBundle),
                intercept: true, auth: AuthConfig(kind: .bearer(token: Secret(source: .env("API_TOKEN"), value: "py-intercepted-token")))
            )]
        }
        defer { Task { try? await gateway.stop(); try? await tls.shutdown() } }

        let script = """
            import json, os, requests
            r = requests.get(os.environ["TLS"] + "/echo?from=python", timeout=20)
            print(json.dumps([r.status_code, [h[1] for h in r.json()["headers"] if h[0].lower() == "authorization"]]))
            """
        let result = try await ProcessRunner.run(
            "python3", ["-c", script],
            environment: [
                "HTTPS_PROXY": gateway.proxyURL, "https_proxy": gateway.proxyURL, "NO_PROXY": "", "no_proxy": "",
                "REQUESTS_CA_BUNDLE": "\(dir)/state/ca.pem", "TLS": "https://localhost:\(tls.port)",
            ]
        )
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(result.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines) == #"[200, ["Bearer py-intercepted-token"]]"#)
    }
}
