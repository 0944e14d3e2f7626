import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability
import GatewayTesting
import Testing

/// Faults on the response body toward the app (issue 55), with real clients:
/// a slow body trickles at the rule's rate (timed by curl and by the trace
/// record, bounded generously), and a reset in the middle of the body cuts
/// the transfer for curl and Python `requests`. Each is counted, marked in
/// the trace, and never counted as the upstream's error.
@Suite(.timeLimit(.minutes(3)))
struct BodyFaultTests {
    static func gateway(_ rule: FaultRule, traceDir: String) async throws -> GatewayHarness {
        try await GatewayHarness.start { config in
            var upstream = UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])
            upstream.faults = FaultsConfig(seed: 1, rules: [rule])
            config.upstreams = [upstream]
            config.debug = true
            config.trace = TraceConfig(file: "\(traceDir)/trace.jsonl")
        }
    }

    @Test func aSlowBodyTricklesAtTheRuleRate() async throws {
        let upstream = try await TestUpstream.start()
        let dir = try TraceTests.tempDir()
        let gateway = try await Self.gateway(FaultRule(endpoint: EndpointTemplate("/bytes/{n}")!, action: .slowBody(bytesPerSecond: 2000)), traceDir: dir)
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); try? FileManager.default.removeItem(atPath: dir) } }

        // 4,000 bytes at 2,000 bytes per second: about 2 s of body after a head at once.
        let result = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code} %{size_download} %{time_starttransfer} %{time_total}", upstream.url("/bytes/4000")])
        let fields = result.stdoutString.split(separator: " ")
        #expect(result.status == 0 && fields.count == 4, "\(result.stdoutString) \(result.stderrString)")
        #expect(fields.first == "200" && fields.dropFirst().first == "4000", "the whole body arrives: \(result.stdoutString)")
        let firstByte = Double(fields.dropFirst(2).first ?? "") ?? -1
        let total = Double(fields.last ?? "") ?? -1
        #expect(total - firstByte >= 1.5 && total < 20, "the body took about 2 s after its first byte: \(result.stdoutString)")

        let record = try #require(try await TraceTests.readRecords("\(dir)/trace.jsonl", count: 1).first)
        #expect(record.injected == "fault:slow_body")
        #expect(record.duration >= 1.5, "the trace times the slow body: \(record.duration)")
        let metrics = try await FaultInjectionTests.metrics(gateway)
        #expect(FaultInjectionTests.lines(metrics, "gateway_faults_injected_total{").contains { $0.contains("kind=\"slow_body\"") && $0.hasSuffix(" 1") }, "\(metrics)")
        #expect(!FaultInjectionTests.lines(metrics, "gateway_request_errors_total{").contains { !$0.hasSuffix(" 0") })
    }

    @Test func aResetInTheMiddleOfTheBodyCutsTheTransfer() async throws {
        let upstream = try await TestUpstream.start()
        let dir = try TraceTests.tempDir()
        let gateway = try await Self.gateway(FaultRule(endpoint: EndpointTemplate("/bytes/{n}")!, action: .resetMidBody(afterBytes: 10_000)), traceDir: dir)
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); try? FileManager.default.removeItem(atPath: dir) } }

        let long = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code} %{size_download}", upstream.url("/bytes/100000")])
        #expect(long.status == 18, "curl: transfer closed with bytes remaining: \(long.status) \(long.stderrString)")
        #expect(long.stdoutString == "200 10000", "\(long.stdoutString)")
        // A body no longer than the bound is still cut: one byte short of its length.
        let short = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code} %{size_download}", upstream.url("/bytes/500")])
        #expect(short.status == 18 && short.stdoutString == "200 499", "\(short.status) \(short.stdoutString)")

        let script = """
            import os, requests
            try:
                r = requests.get(os.environ["URL"] + "?chunked=1&chunk=4096", proxies={"http": os.environ["PROXY"]}, timeout=20)
                print("whole", len(r.content))
            except requests.exceptions.RequestException as e:
                print("cut", type(e).__name__)
            """
        let python = try await ProcessRunner.run(
            "python3", ["-c", script], environment: ["PROXY": gateway.proxyURL, "URL": upstream.url("/bytes/100000"), "NO_PROXY": "", "no_proxy": ""],
            timeout: .seconds(60)
        )
        #expect(python.stdoutString.hasPrefix("cut "), "requests saw the chunked body cut: \(python.stdoutString) \(python.stderrString)")

        let records = try await TraceTests.readRecords("\(dir)/trace.jsonl", count: 3)
        #expect(records.map(\.injected) == ["fault:reset", "fault:reset", "fault:reset"], "\(records.map(\.injected))")
        let metrics = try await FaultInjectionTests.metrics(gateway)
        #expect(FaultInjectionTests.lines(metrics, "gateway_faults_injected_total{").contains { $0.contains("kind=\"reset\"") && $0.hasSuffix(" 3") }, "\(metrics)")
        #expect(!FaultInjectionTests.lines(metrics, "gateway_request_errors_total{").contains { !$0.hasSuffix(" 0") }, "not the upstream's error")
        #expect(!FaultInjectionTests.lines(metrics, "gateway_requests_total{").contains { $0.contains("upstream=\"api\"") && !$0.hasSuffix(" 0") }, "\(metrics)")
    }
}

extension BodyFaultTests {
    /// The same faults on an intercepted HTTP/2 stream: the slow body arrives
    /// whole and late, the reset ends the stream cut short (curl fails, the
    /// connection's other streams are not the fault's business).
    @Test func bodyFaultsActOnAnInterceptedHTTP2Stream() async throws {
        let interception = InterceptionTests()
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start { config in
            interception.configure(f)(&config)
            config.upstreams[0].faults = FaultsConfig(seed: 1, rules: [
                FaultRule(endpoint: EndpointTemplate("/bytes/{n}")!, action: .slowBody(bytesPerSecond: 2000)),
                FaultRule(endpoint: EndpointTemplate("/status/{code}")!, action: .resetMidBody(afterBytes: 3)),
            ])
        }
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let slow = try await gateway.curl([
            "--http2", "--cacert", f.caPath, "-o", "/dev/null", "-w", "%{http_version} %{size_download} %{time_starttransfer} %{time_total}", "\(f.url)/bytes/2000",
        ])
        let fields = slow.stdoutString.split(separator: " ")
        #expect(slow.status == 0 && fields.prefix(2) == ["2", "2000"], "\(slow.stdoutString) \(slow.stderrString)")
        let firstByte = Double(fields.dropFirst(2).first ?? "") ?? -1
        let total = Double(fields.last ?? "") ?? -1
        #expect(total - firstByte >= 0.6 && total < 20, "2,000 bytes at 2,000 bytes/s: \(slow.stdoutString)")

        let cut = try await gateway.curl(["--http2", "--cacert", f.caPath, "-o", "/dev/null", "-w", "%{http_version} %{size_download}", "\(f.url)/status/200"])
        #expect(cut.status != 0, "the stream ended cut short: \(cut.status) \(cut.stderrString)")
        #expect(cut.stdoutString == "2 3", "the first 3 bytes of 11: \(cut.stdoutString)")
        let metrics = try await FaultInjectionTests.metrics(gateway)
        #expect(FaultInjectionTests.lines(metrics, "gateway_faults_injected_total{").contains { $0.contains("kind=\"reset\"") && $0.hasSuffix(" 1") }, "\(metrics)")
    }
}
