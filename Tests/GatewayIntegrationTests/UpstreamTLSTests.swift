import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import GatewayUpstream
import Testing

/// TLS origination and certificate pinning through the running gateway, with
/// curl speaking plain http to the gateway and the gateway speaking TLS upstream.
@Suite(.timeLimit(.minutes(2)))
struct UpstreamTLSTests {
    struct Fixture {
        var certificates: TestCertificates
        var paths: TestCertificates.Paths
        var upstream: TestUpstream
    }

    func fixture() async throws -> Fixture {
        let certificates = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let paths = try certificates.write(to: try TestCertificates.makeTemporaryDirectory())
        let upstream = try await TestUpstream.start(tls: try certificates.makeServerContext())
        return Fixture(certificates: certificates, paths: paths, upstream: upstream)
    }

    func upstreamConfig(_ f: Fixture, pins: [SPKIPin], mode: PinMode = .enforce) -> UpstreamConfig {
        UpstreamConfig(
            name: "api",
            hosts: [HostPattern("api.test")!],
            origin: UpstreamOrigin(scheme: .https, host: "localhost", port: f.upstream.port),
            tls: UpstreamTLSSettings(pins: pins, pinMode: mode, caFile: f.paths.caBundle)
        )
    }

    @Test func originatesTLSAndReusesTheConnection() async throws {
        let f = try await fixture()
        let gateway = try await GatewayHarness.start { $0.upstreams = [upstreamConfig(f, pins: [])] }
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let result = try await gateway.curl(["http://api.test/echo?x=1", "http://api.test/echo?x=2"])
        #expect(result.status == 0, "\(result.stderrString)")
        let received = f.upstream.receivedRequests
        #expect(received.map(\.target) == ["/echo?x=1", "/echo?x=2"])
        #expect(received.first?.headers.first { $0[0].lowercased() == "host" }?[1] == "localhost:\(f.upstream.port)")
        #expect(f.upstream.connectionsAccepted == 1, "the TLS connection is pooled")
    }

    @Test(arguments: ["leaf", "intermediate", "root", "backup"])
    func matchingPinLetsTheRequestThrough(_ which: String) async throws {
        let f = try await fixture()
        let leaf = try SPKIHasher.pin(for: f.certificates.leaf.certificate)
        let intermediate = try SPKIHasher.pin(for: f.certificates.intermediate.certificate)
        let root = try SPKIHasher.pin(for: f.certificates.root.certificate)
        let wrong = SPKIPin(digest: Array(repeating: 7, count: 32))
        let pins: [SPKIPin] = switch which {
        case "leaf": [leaf]
        case "intermediate": [intermediate]
        case "root": [root]  // the server never sends the root
        default: [wrong, leaf]
        }
        let gateway = try await GatewayHarness.start { $0.upstreams = [upstreamConfig(f, pins: pins)] }
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }
        let result = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.test/status/200"])
        #expect(result.stdoutString == "200", "\(which): \(gateway.logs.text)")
    }

    @Test func wrongPinIsRefusedBeforeAnyRequestByte() async throws {
        let f = try await fixture()
        let wrong = SPKIPin(digest: Array(repeating: 9, count: 32))
        let gateway = try await GatewayHarness.start { $0.upstreams = [upstreamConfig(f, pins: [wrong])] }
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let result = try await gateway.curl(["-i", "http://api.test/echo"])
        let response = try #require(RawResponse(result.stdout))
        #expect(response.status == 502)
        #expect(response.header("X-Gateway-Error") == "pin_mismatch")
        #expect(f.upstream.requestsServed == 0, "no request byte may reach a mismatching upstream")
        let leaf = try SPKIHasher.pin(for: f.certificates.leaf.certificate)
        #expect(gateway.logs.text.contains(leaf.description), "the log names the presented pins")
        let metrics = try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/metrics"]).stdoutString
        #expect(metrics.contains("gateway_pin_failures_total{upstream=\"api\",mode=\"enforce\"} 1"), "\(metrics)")
    }

    @Test func reportModeLetsTheRequestThroughAndCounts() async throws {
        let f = try await fixture()
        let wrong = SPKIPin(digest: Array(repeating: 9, count: 32))
        let gateway = try await GatewayHarness.start { $0.upstreams = [upstreamConfig(f, pins: [wrong], mode: .report)] }
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let result = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.test/status/200"])
        #expect(result.stdoutString == "200")
        let metrics = try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/metrics"]).stdoutString
        #expect(metrics.contains("gateway_pin_failures_total{upstream=\"api\",mode=\"report\"} 1"), "\(metrics)")
    }

    @Test func unknownCAIsA502CertificateInvalid() async throws {
        let f = try await fixture()
        let other = try TestCertificates()
        let otherPaths = try other.write(to: try TestCertificates.makeTemporaryDirectory())
        let gateway = try await GatewayHarness.start { config in
            var upstream = upstreamConfig(f, pins: [])
            upstream.tls.caFile = otherPaths.caBundle
            config.upstreams = [upstream]
        }
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }
        let response = try #require(RawResponse(try await gateway.curl(["-i", "http://api.test/echo"]).stdout))
        #expect(response.status == 502)
        #expect(response.header("X-Gateway-Error") == "certificate_invalid")
        #expect(f.upstream.requestsServed == 0)
    }

    @Test func pinsCommandPrintsChainAndSnippet() async throws {
        let f = try await fixture()
        defer { Task { try? await f.upstream.shutdown() } }
        let result = try await ProcessRunner.run(
            GatewayProcess.executableURL.path,
            ["pins", "localhost:\(f.upstream.port)", "--ca-file", f.paths.caBundle]
        )
        #expect(result.status == 0, "\(result.stderrString)")
        let leaf = try SPKIHasher.pin(for: f.certificates.leaf.certificate)
        let intermediate = try SPKIHasher.pin(for: f.certificates.intermediate.certificate)
        #expect(result.stdoutString.contains(leaf.description))
        #expect(result.stdoutString.contains(intermediate.description))
        #expect(result.stdoutString.contains("pins:"))
    }
}
