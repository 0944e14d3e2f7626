import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// Faults through the live gateway (issue 55), with real clients: Python
/// `requests` honouring an injected 429's `Retry-After`, `curl --retry`
/// seeing injected 503s, a client timing out against injected latency, the
/// gateway's own retry seeing a fault aimed at it, and one seed giving one
/// sequence. No injected response counts as the upstream's.
@Suite(.timeLimit(.minutes(3)))
struct FaultInjectionTests {
    static func gateway(_ faults: FaultsConfig, retry: RetryConfig? = nil) async throws -> GatewayHarness {
        try await GatewayHarness.start { config in
            var upstream = UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!], retry: retry)
            upstream.faults = faults
            config.upstreams = [upstream]
        }
    }

    /// An upstream whose `/custom/...` answers 200 `ok`.
    static func upstream() async throws -> TestUpstream {
        let upstream = try await TestUpstream.start()
        upstream.setResponder { _ in .text("ok\n") }
        return upstream
    }

    static func metrics(_ gateway: GatewayHarness) async throws -> String {
        try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/metrics"]).stdoutString
    }

    static func lines(_ text: String, _ prefix: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }

    @Test func pythonRequestsHonoursAnInjected429sRetryAfter() async throws {
        let upstream = try await Self.upstream()
        let orders = FaultRule(endpoint: EndpointTemplate("GET /custom/orders")!, every: 2, action: .error(FaultResponse(status: 429, retryAfter: .seconds(1))))
        let gateway = try await Self.gateway(FaultsConfig(seed: 1, rules: [orders]))
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let script = """
            import json, os, time, requests
            from requests.adapters import HTTPAdapter
            from urllib3.util.retry import Retry
            s = requests.Session()
            retry = Retry(total=3, status_forcelist=[429], respect_retry_after_header=True, backoff_factor=0)
            s.mount("http://", HTTPAdapter(max_retries=retry))
            proxies = {"http": os.environ["PROXY"]}
            first = s.get(os.environ["URL"], proxies=proxies, timeout=20)
            started = time.monotonic()
            second = s.get(os.environ["URL"], proxies=proxies, timeout=20)
            print(json.dumps([first.status_code, second.status_code, round(time.monotonic() - started, 2)]))
            """
        let result = try await ProcessRunner.run(
            "python3", ["-c", script],
            environment: ["PROXY": gateway.proxyURL, "URL": upstream.url("/custom/orders"), "NO_PROXY": "", "no_proxy": ""],
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.stderrString)")
        let values = try JSONSerialization.jsonObject(with: Data(result.stdoutString.utf8)) as? [Any]
        #expect(values?[0] as? Int == 200 && values?[1] as? Int == 200, "\(result.stdoutString)")
        let waited = values?[2] as? Double ?? 0
        #expect(waited >= 0.95 && waited < 10, "urllib3 waited the injected Retry-After (1 s): \(waited)")
        #expect(upstream.requestsServed == 2, "the 429 never reached the upstream")
        #expect(gateway.logs.text.contains("injected=fault:error"), "the log line is marked")
        let metrics = try await Self.metrics(gateway)
        #expect(Self.lines(metrics, "gateway_faults_injected_total{").contains { $0.contains("kind=\"error\"") && $0.hasSuffix(" 1") }, "\(metrics)")
        #expect(!Self.lines(metrics, "gateway_requests_total{").contains { $0.contains("status_class=\"4xx\"") && !$0.hasSuffix(" 0") }, "not the upstream's 429")
    }

    @Test func curlRetrySeesInjected503s() async throws {
        let upstream = try await Self.upstream()
        let flaky = FaultRule(endpoint: EndpointTemplate("/custom/flaky")!, every: 2, action: .error(FaultResponse(status: 503)))
        let gateway = try await Self.gateway(FaultsConfig(seed: 1, rules: [flaky]))
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let first = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/custom/flaky")])
        #expect(first.stdoutString == "200")
        // A file curl can truncate before it retries (it gives up on /dev/null or stdout).
        let output = TestScratch.path("curl-retry")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let retried = try await gateway.curl(["-v", "--retry", "2", "--retry-delay", "1", "-o", output, "-w", "%{http_code}", upstream.url("/custom/flaky")])
        #expect(retried.stdoutString == "200", "curl retried past the injected 503: \(retried.stdoutString) \(retried.stderrString)")
        #expect(retried.stderrString.contains("< HTTP/1.1 503"), "curl saw the 503 first")
        #expect(retried.stderrString.lowercased().contains("< x-gateway-injected: fault:error"))
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "ok\n")
        #expect(upstream.requestsServed == 2)
        let metrics = try await Self.metrics(gateway)
        #expect(!Self.lines(metrics, "gateway_requests_total{").contains { $0.contains("status_class=\"5xx\"") && !$0.hasSuffix(" 0") }, "\(metrics)")
        #expect(!Self.lines(metrics, "gateway_request_errors_total{").contains { !$0.hasSuffix(" 0") }, "no gateway error either")
    }

    @Test func aClientWithA2sTimeoutTimesOutAgainst5sOfInjectedLatency() async throws {
        let upstream = try await Self.upstream()
        let slow = FaultRule(endpoint: EndpointTemplate("/custom/slow")!, action: .latency(min: .seconds(5), max: .seconds(5)))
        let gateway = try await Self.gateway(FaultsConfig(seed: 1, rules: [slow]))
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let started = ContinuousClock.now
        let result = try await gateway.curl(["--max-time", "2", upstream.url("/custom/slow")])
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 28, "curl timed out: \(result.status) \(result.stderrString)")
        #expect(elapsed >= .milliseconds(1900) && elapsed < .seconds(4), "\(elapsed)")
        let fast = try await gateway.curl(["-w", "%{http_code}", upstream.url("/custom/other")])
        #expect(fast.stdoutString.hasSuffix("200"), "another endpoint is not delayed")
    }

    @Test func aFaultAimedAtThePoliciesIsRetriedByTheGateway() async throws {
        let upstream = try await Self.upstream()
        let rule = FaultRule(every: 2, toward: .policies, action: .error(FaultResponse(status: 503)))
        let retry = RetryConfig(attempts: 3, backoffBase: .milliseconds(5), backoffMax: .milliseconds(20))
        let gateway = try await Self.gateway(FaultsConfig(seed: 1, rules: [rule]), retry: retry)
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let statuses = try await (0..<4).asyncMap { _ in
            try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/custom/a")]).stdoutString
        }
        #expect(statuses == ["200", "200", "200", "200"], "the gateway's retry absorbed every injected 503")
        let metrics = try await Self.metrics(gateway)
        #expect(Self.lines(metrics, "gateway_retries_total{").contains { $0.contains("status_503") }, "\(metrics)")
        #expect(Self.lines(metrics, "gateway_faults_injected_total{").contains { $0.hasSuffix(" 2") || $0.hasSuffix(" 3") }, "\(metrics)")
        #expect(upstream.requestsServed == 4)
    }

    @Test func theSameSeedGivesTheSameFaultSequenceTwice() async throws {
        let upstream = try await Self.upstream()
        defer { Task { try? await upstream.shutdown() } }
        func run(seed: UInt64) async throws -> [String] {
            let gateway = try await Self.gateway(FaultsConfig(seed: seed, rules: [FaultRule(rate: 0.4, action: .error(FaultResponse(status: 500)))]))
            defer { Task { try? await gateway.stop() } }
            var statuses: [String] = []
            for _ in 0..<24 {
                statuses.append(try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/custom/s")]).stdoutString)
            }
            return statuses
        }
        let first = try await run(seed: 2026)
        let second = try await run(seed: 2026)
        #expect(first == second)
        #expect(first.contains("500") && first.contains("200"), "\(first)")
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
