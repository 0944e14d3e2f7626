import Foundation
import GatewayApp
import GatewayConfig
import GatewayCore
import GatewayListener
import GatewayObservability
import GatewayTesting
import Logging
import Testing

/// HTTPS interception with the local CA, end to end: curl trusts the exported
/// CA and uses the gateway as its proxy for `https://` URLs of an in-process TLS
/// upstream; the gateway terminates TLS, applies its policies, and verifies the
/// real upstream with its own CA bundle.
@Suite(.timeLimit(.minutes(3)))
struct InterceptionTests {
    static let token = Secret(source: .env("API_TOKEN"), value: "intercepted-S3cret")

    struct Fixture {
        var pki: TestCertificates
        var paths: TestCertificates.Paths
        var upstream: TestUpstream
        var stateDir: String
        var caPath: String { "\(stateDir)/ca.pem" }
        var keyPath: String { "\(stateDir)/ca-key.pem" }
        var url: String { "https://localhost:\(upstream.port)" }
    }

    func fixture() async throws -> Fixture {
        let pki = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-intercept")
        let paths = try pki.write(to: dir)
        let upstream = try await TestUpstream.start(tls: try pki.makeServerContext())
        return Fixture(pki: pki, paths: paths, upstream: upstream, stateDir: "\(dir)/state")
    }

    func configure(_ f: Fixture, intercept: Bool = true, trace: String? = nil) -> (inout GatewayConfig) -> Void {
        { config in
            config.upstreams = [UpstreamConfig(
                name: "api", hosts: [HostPattern("localhost")!],
                // The test upstream's TLS port: the credential's scope is 443 unless listed.
                ports: [443, f.upstream.port],
                tls: UpstreamTLSSettings(caFile: f.paths.caBundle),
                intercept: intercept,
                auth: AuthConfig(kind: .bearer(token: Self.token))
            )]
            config.access.connectPorts = [443, f.upstream.port]
            config.interception = InterceptionConfig(stateDir: f.stateDir)
            if let trace {
                config.debug = true
                config.trace = TraceConfig(file: trace)
            }
        }
    }

    func metrics(_ gateway: GatewayHarness) async throws -> String {
        try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/metrics"]).stdoutString
    }

    @Test func interceptedHTTPSGetsAuthMetricsAndAReplayableTrace() async throws {
        let f = try await fixture()
        let traceFile = "\(f.stateDir)/trace.jsonl"
        let gateway = try await GatewayHarness.start(configure(f, trace: traceFile))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        // The CA was created at start, key private to its owner.
        let keyMode = try FileManager.default.attributesOfItem(atPath: f.keyPath)[.posixPermissions] as? NSNumber
        #expect(keyMode?.intValue == 0o600)
        #expect(gateway.logs.text.contains("created the interception CA"))

        // Two requests in one tunnel, then a second tunnel (the leaf comes from the cache).
        let first = try await gateway.curl(["-v", "--cacert", f.caPath, "\(f.url)/echo?n=1", "\(f.url)/echo?n=2"])
        #expect(first.status == 0, "\(first.stderrString)\n\(gateway.logs.text)")
        #expect(first.stderrString.contains("Gateway interception CA"), "the client saw the gateway's leaf: \(first.stderrString)")
        let second = try await gateway.curl(["--cacert", f.caPath, "\(f.url)/echo?n=3"])
        #expect(second.status == 0, "\(second.stderrString)")
        let echo = try second.json(EchoReply.self)
        #expect(echo.values("Authorization") == ["Bearer \(Self.token.value)"], "auth injected inside the tunnel")

        let received = f.upstream.receivedRequests
        #expect(received.map(\.target) == ["/echo?n=1", "/echo?n=2", "/echo?n=3"])
        #expect(f.upstream.connectionsAccepted == 1, "the gateway's own TLS connection upstream is pooled")

        let text = try await metrics(gateway)
        #expect(text.contains("gateway_interception_certificates_total{upstream=\"api\",result=\"minted\"} 1"), "\(text)")
        #expect(text.contains("gateway_interception_certificates_total{upstream=\"api\",result=\"cached\"} 1"), "\(text)")
        #expect(text.contains("gateway_requests_total{upstream=\"api\",endpoint=\"/echo\",method=\"GET\",status_class=\"2xx\"} 3"), "\(text)")
        #expect(!text.contains(Self.token.value))

        // The trace has the https URL, and its curl line (with --cacert) replays through the gateway.
        let records = try await TraceTests.readRecords(traceFile, count: 3)
        let record = try #require(records.last)
        #expect(record.curl.contains("'\(f.url)/echo?n=3'"), "\(record.curl)")
        #expect(record.curl.contains("--cacert '\(f.caPath)'"), "\(record.curl)")
        #expect(!record.curl.contains(Self.token.value))
        // The direct form trusts what the gateway trusted upstream (its tls.ca_file).
        #expect(record.curlDirect.contains("--cacert '\(f.paths.caBundle)'"), "\(record.curlDirect)")
        var direct = ProcessInfo.processInfo.environment
        direct["API_TOKEN"] = Self.token.value
        let directReplay = try await ProcessRunner.run("/bin/sh", ["-c", record.curlDirect + " -sS -o /dev/null -w '%{http_code}'"], environment: direct, timeout: .seconds(30))
        #expect(directReplay.stdoutString == "200", "\(directReplay.stderrString) \(record.curlDirect)")
        let replay = try await ProcessRunner.run("/bin/sh", ["-c", record.curl + " -sS -o /dev/null -w '%{http_code}'"], environment: ["NO_PROXY": "", "no_proxy": ""], timeout: .seconds(30))
        #expect(replay.stdoutString == "200", "\(replay.stderrString)")
        #expect(f.upstream.receivedRequests.count == 5)
        #expect(f.upstream.receivedRequests.last?.headers.contains { $0[0].lowercased() == "authorization" && $0[1] == "Bearer \(Self.token.value)" } == true)
    }

    /// The leaf names the SNI when the client sends one that differs from its
    /// CONNECT host, and the CONNECT host (an IP address SAN) when it sends none.
    @Test func leafNamesTheSNIOrTheConnectHost() async throws {
        let f = try await fixture()
        let gateway = try await GatewayHarness.start { config in
            configure(f)(&config)
            config.upstreams[0].hosts = [HostPattern("localhost")!, HostPattern("127.0.0.1")!, HostPattern("other.test")!]
        }
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let sni = try await ProcessRunner.run("openssl", [
            "s_client", "-proxy", "127.0.0.1:\(gateway.proxyPort)", "-connect", "localhost:\(f.upstream.port)",
            "-servername", "other.test", "-CAfile", f.caPath, "-verify_hostname", "other.test", "-verify_return_error", "-brief",
        ], stdin: Array("Q\n".utf8), timeout: .seconds(20))
        let sniOutput = sni.stdoutString + sni.stderrString
        #expect(sniOutput.contains("Verification: OK"), "\(sniOutput)")
        #expect(sniOutput.contains("other.test"), "\(sniOutput)")

        // An SNI the config does not intercept gets no leaf of its own: the gateway
        // never vouches for a host it was not told to intercept.
        let foreign = try await ProcessRunner.run("openssl", [
            "s_client", "-proxy", "127.0.0.1:\(gateway.proxyPort)", "-connect", "localhost:\(f.upstream.port)",
            "-servername", "bank.example", "-CAfile", f.caPath, "-verify_hostname", "bank.example", "-verify_return_error", "-brief",
        ], stdin: Array("Q\n".utf8), timeout: .seconds(20))
        let foreignOutput = foreign.stdoutString + foreign.stderrString
        #expect(!foreignOutput.contains("Verification: OK"), "\(foreignOutput)")
        #expect(foreignOutput.lowercased().contains("hostname mismatch"), "\(foreignOutput)")

        // curl sends no SNI for an IP address: the leaf carries an IP SAN for the CONNECT host.
        let ip = try await gateway.curl(["--cacert", f.caPath, "https://127.0.0.1:\(f.upstream.port)/echo"])
        #expect(ip.status == 0, "\(ip.stderrString)")
        #expect(try ip.json(EchoReply.self).values("Authorization") == ["Bearer \(Self.token.value)"])
    }

    @Test func hostsNotInterceptedKeepTheUpstreamsOwnCertificate() async throws {
        let f = try await fixture()
        let gateway = try await GatewayHarness.start(configure(f, intercept: false))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let result = try await gateway.curl(["-v", "--cacert", f.paths.caBundle, "\(f.url)/echo"])
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(result.stderrString.contains("Gateway Test Intermediate CA"), "the upstream's own chain: \(result.stderrString)")
        #expect(!result.stderrString.contains("Gateway interception CA"))
        let echo = try result.json(EchoReply.self)
        #expect(echo.values("Authorization").isEmpty, "a blind tunnel is never read or modified")
        #expect(!FileManager.default.fileExists(atPath: f.keyPath), "no CA is made when nothing is intercepted")
    }

    @Test func aClientThatDoesNotTrustTheCAIsLoggedOnceAndCounted() async throws {
        let f = try await fixture()
        let gateway = try await GatewayHarness.start(configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        for _ in 0..<2 {
            // The upstream's CA is not the gateway's: the client refuses the minted leaf.
            let result = try await gateway.curl(["--cacert", f.paths.caBundle, "\(f.url)/echo"])
            #expect(result.status == 60, "curl: peer certificate cannot be authenticated: \(result.stderrString)")
        }
        #expect(f.upstream.receivedRequests.isEmpty)
        // Both failures are counted; at least the first as untrusted_ca (a client may
        // reset the connection right behind its alert, which then counts as closed).
        func failures(_ text: String) -> [String: Int] {
            var counts: [String: Int] = [:]
            for line in text.split(separator: "\n") where line.hasPrefix("gateway_interception_handshake_failures_total{") {
                let reason = line.split(separator: "\"").dropFirst(3).first.map(String.init) ?? "?"
                counts[reason, default: 0] += Int(line.split(separator: " ").last ?? "0") ?? 0
            }
            return counts
        }
        var counts: [String: Int] = [:]
        for _ in 0..<100 {
            counts = failures(try await metrics(gateway))
            if counts.values.reduce(0, +) >= 2 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(counts.values.reduce(0, +) == 2, "\(counts)")
        #expect(counts["untrusted_ca", default: 0] >= 1, "\(counts)")
        let warnings = gateway.logs.all.filter { $0.contains("refused the gateway's interception CA for localhost") }
        #expect(warnings.count == 1, "logged once per host: \(gateway.logs.text)")
        #expect(gateway.logs.text.contains("gateway ca export"))
    }

    @Test func aCAKeyReadableByOthersIsRefused() async throws {
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-ca")
        let cert = "\(dir)/ca.pem", key = "\(dir)/ca-key.pem"
        let (authority, created) = try LocalCertificateAuthority.loadOrCreate(certPath: cert, keyPath: key)
        #expect(created)
        let reloaded = try LocalCertificateAuthority.loadOrCreate(certPath: cert, keyPath: key)
        #expect(!reloaded.created)
        #expect(try reloaded.authority.fingerprint == authority.fingerprint, "an existing CA is loaded, not replaced")

        chmod(key, 0o644)
        #expect(throws: CertificateAuthorityError.self) { try LocalCertificateAuthority.loadOrCreate(certPath: cert, keyPath: key) }
        do {
            _ = try LocalCertificateAuthority.loadOrCreate(certPath: cert, keyPath: key)
        } catch {
            #expect("\(error)".contains("chmod 600 \(key)"), "\(error)")
        }

        // A symlink to a private key (a mounted secret) is fine: the target's mode counts.
        chmod(key, 0o600)
        let linked = "\(dir)/linked-key.pem"
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: key)
        #expect(try LocalCertificateAuthority.load(certPath: cert, keyPath: linked).fingerprint == authority.fingerprint)
        chmod(key, 0o644)

        // The gateway refuses to start with it, saying which file and what to do.
        var config = GatewayConfig()
        config.listen.proxy = BindAddress(host: "127.0.0.1", port: 0)
        config.listen.admin = BindAddress(host: "127.0.0.1", port: 0)
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], intercept: true)]
        config.interception = InterceptionConfig(caCert: cert, caKey: key)
        let app = GatewayApplication(config: config, configPath: nil, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, handleSignals: false)
        await #expect(throws: StartupError.self) { try await app.run() }

        // Half a pair is refused too.
        try FileManager.default.removeItem(atPath: key)
        #expect(throws: CertificateAuthorityError.self) { try LocalCertificateAuthority.loadOrCreate(certPath: cert, keyPath: key) }
    }

    /// `gateway ca init` and a gateway starting at the same moment agree on one CA.
    @Test func concurrentCreationsAgreeOnOneCA() async throws {
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-ca-race")
        let cert = "\(dir)/state/ca.pem", key = "\(dir)/state/ca-key.pem"
        let results = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<8 {
                group.addTask { try? LocalCertificateAuthority.loadOrCreate(certPath: cert, keyPath: key).authority.fingerprint }
            }
            var all: [String?] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.allSatisfy { $0 != nil }, "none failed")
        #expect(Set(results.compactMap { $0 }).count == 1, "one CA")
    }

    @Test func caCommandsInitAndExport() async throws {
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-ca-cli")
        let configPath = "\(dir)/gateway.yaml"
        try "state_dir: \(dir)/state\n".write(toFile: configPath, atomically: true, encoding: .utf8)
        let binary = GatewayProcess.executableURL.path

        let initResult = try await ProcessRunner.run(binary, ["ca", "init", "-c", configPath], timeout: .seconds(30))
        #expect(initResult.status == 0, "\(initResult.stderrString)")
        #expect(initResult.stdoutString.contains("created the interception CA"))
        let mode = try FileManager.default.attributesOfItem(atPath: "\(dir)/state/ca-key.pem")[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)

        let again = try await ProcessRunner.run(binary, ["ca", "init", "-c", configPath], timeout: .seconds(30))
        #expect(again.stdoutString.contains("the interception CA exists"))

        let export = try await ProcessRunner.run(binary, ["ca", "export", "-c", configPath], timeout: .seconds(30))
        #expect(export.status == 0)
        #expect(export.stdoutString.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(export.stdoutString == (try String(contentsOfFile: "\(dir)/state/ca.pem", encoding: .utf8)))
        for hint in ["xcrun simctl keychain booted add-root-cert", "update-ca-certificates", "curl --cacert", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "security add-trusted-cert"] {
            #expect(export.stderrString.contains(hint), "\(hint)")
        }
        // openssl agrees it is a CA certificate with the fingerprint init printed.
        let x509 = try await ProcessRunner.run("openssl", ["x509", "-noout", "-fingerprint", "-sha256", "-ext", "basicConstraints"], stdin: Array(export.stdoutString.utf8), timeout: .seconds(10))
        #expect(x509.stdoutString.contains("CA:TRUE"), "\(x509.stdoutString)")
        let fingerprint = x509.stdoutString.split(separator: "\n").first { $0.contains("Fingerprint=") }?.split(separator: "=").last.map(String.init)
        #expect(fingerprint.map { initResult.stdoutString.contains($0) } == true, "\(x509.stdoutString)\n\(initResult.stdoutString)")
    }
}
