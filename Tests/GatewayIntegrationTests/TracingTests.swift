import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import NIOConcurrencyHelpers
import Testing

/// Distributed tracing end to end (issue 38): the gateway continues a client's
/// W3C trace (or starts one), gives each upstream attempt a `traceparent`
/// whose parent is that attempt's CLIENT span, and exports its spans over
/// OTLP/HTTP to a collector (``OTLPReceiver``, Python with PyPI's
/// `opentelemetry-proto`, decoding what it receives).
@Suite(.timeLimit(.minutes(3)))
struct TracingTests {
    static let clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let clientSpan = "00f067aa0ba902b7"
    static let clientParent = "00-\(clientTrace)-\(clientSpan)-01"
    static let serviceName = "gateway-under-test"
    static let secretQueryValue = "q-secret-4e1f9a"

    /// `tracing` as the standard variables make it, exporting to `receiver` every 100 ms.
    static func tracing(_ receiver: OTLPReceiver, _ more: [String: String] = [:]) throws -> TracingConfig {
        var tracing = TracingConfig()
        let environment = [
            "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.baseURL,
            "OTEL_SERVICE_NAME": serviceName, "OTEL_BSP_SCHEDULE_DELAY": "100",
        ].merging(more) { $1 }
        try tracing.applyEnvironment(environment, file: "environment")
        return tracing
    }

    /// A gateway tracing to `receiver`, its upstream `api` covering 127.0.0.1.
    static func gateway(_ receiver: OTLPReceiver, retry: RetryConfig? = nil, environment: [String: String] = [:]) async throws -> GatewayHarness {
        try await GatewayHarness.start { config in
            config.tracing = try Self.tracing(receiver, environment)
            config.upstreams = [UpstreamConfig(
                name: "api", hosts: [HostPattern("127.0.0.1")!], endpoints: [EndpointTemplate("GET /echo/{id}")!], retry: retry
            )]
        }
    }

    /// The parts of a `traceparent` the upstream received.
    static func parent(of request: RecordedRequest?) throws -> (trace: String, parent: String, flags: String) {
        let value = try #require(request?.header("traceparent"), "the upstream got no traceparent")
        let parts = value.split(separator: "-").map(String.init)
        try #require(parts.count == 4 && parts[0] == "00", "\(value)")
        return (parts[1], parts[2], parts[3])
    }

    @Test func aRequestWithTraceparentContinuesTheClientsTrace() async throws {
        let receiver = try await OTLPReceiver.start()
        let upstream = try await TestUpstream.start()
        let gateway = try await Self.gateway(receiver)
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); await receiver.stop() } }

        let result = try await gateway.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "traceparent: \(Self.clientParent)", "-H", "tracestate: congo=t61rcWkgMzE",
            upstream.url("/echo/42?token=\(Self.secretQueryValue)&page=2"),
        ])
        #expect(result.stdoutString == "200", "\(result.stderrString)")

        // The origin sees the client's trace, with the gateway's attempt span as parent.
        let seen = try Self.parent(of: upstream.receivedRequests.last)
        #expect(seen.trace == Self.clientTrace)
        #expect(seen.parent != Self.clientSpan)
        #expect(seen.flags == "01")
        #expect(upstream.receivedRequests.last?.header("tracestate") == "congo=t61rcWkgMzE")

        let spans = await receiver.trace(Self.clientTrace)
        let server = try #require(spans.first(where: { $0.isServer }), "\(spans) \(receiver.log)")
        let client = try #require(spans.first(where: { $0.isClient }), "\(spans)")
        #expect(spans.filter({ $0.isServer }).count == 1 && spans.filter({ $0.isClient }).count == 1, "\(spans)")
        #expect(server.parentSpanID == Self.clientSpan, "the SERVER span is the client's span's child")
        #expect(client.parentSpanID == server.spanID, "the CLIENT span is the SERVER span's child")
        #expect(client.spanID == seen.parent, "the origin's parent is the CLIENT span")
        #expect(server.serviceName == Self.serviceName, "service.name from OTEL_SERVICE_NAME")
        #expect(server.path == "/v1/traces" && server.contentType == "application/x-protobuf")

        #expect(server.name == "GET /echo/{id}")
        #expect(server.attributes["http.request.method"] == "GET")
        #expect(server.attributes["url.scheme"] == "http")
        #expect(server.attributes["server.address"] == "127.0.0.1")
        #expect(server.attributes["server.port"] == String(upstream.port))
        #expect(server.attributes["url.path"] == "/echo/42")
        #expect(server.attributes["url.query"] == "token=&page=", "every query value dropped, as the log line does")
        #expect(server.attributes["http.route"] == "/echo/{id}")
        #expect(server.attributes["http.response.status_code"] == "200")
        #expect(server.attributes["gateway.upstream"] == "api")
        #expect(server.attributes["gateway.attempts"] == "1")
        #expect(server.attributes["error.type"] == nil)
        #expect(client.attributes["http.response.status_code"] == "200")
        #expect(client.attributes["url.full"] == "http://127.0.0.1:\(upstream.port)/echo/42?token=&page=")
        #expect(client.attributes["http.request.resend_count"] == nil)
        #expect(client.start >= server.start && client.end <= server.end, "the attempt lies within the exchange")
        for span in spans {
            for value in span.attributes.values { #expect(!value.contains(Self.secretQueryValue), "\(span)") }
        }

        // The exchange's log line leads to the trace.
        let line = try #require(gateway.logs.all.first { $0.contains("/echo/42") && $0.contains("status=200") }, "\(gateway.logs.text)")
        #expect(line.contains("trace_id=\(Self.clientTrace)"), "\(line)")
        #expect(line.contains("span_id=\(server.spanID)"), "\(line)")
    }

    @Test func aRequestWithoutTraceContextStartsATrace() async throws {
        let receiver = try await OTLPReceiver.start()
        let upstream = try await TestUpstream.start()
        let gateway = try await Self.gateway(receiver)
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); await receiver.stop() } }

        // An uppercase traceparent is invalid: a new trace, the stale tracestate not passed on.
        let invalid = "00-\(Self.clientTrace.uppercased())-\(Self.clientSpan)-01"
        let result = try await gateway.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "traceparent: \(invalid)", "-H", "tracestate: stale=1", upstream.url("/status/204"),
        ])
        #expect(result.stdoutString == "204", "\(result.stderrString)")
        let seen = try Self.parent(of: upstream.receivedRequests.last)
        #expect(seen.trace.count == 32 && seen.trace != Self.clientTrace.lowercased() && seen.trace != String(repeating: "0", count: 32))
        #expect(seen.flags == "01", "sampled: a new trace at ratio 1")
        #expect(upstream.receivedRequests.last?.header("tracestate") == nil)

        let spans = await receiver.trace(seen.trace)
        let server = try #require(spans.first(where: { $0.isServer }), "\(spans) \(receiver.log)")
        let client = try #require(spans.first(where: { $0.isClient }))
        #expect(server.parentSpanID.isEmpty, "a root span")
        #expect(client.parentSpanID == server.spanID)
        #expect(client.spanID == seen.parent)
        #expect(server.name == "GET /status/{id}")
        #expect(server.attributes["http.response.status_code"] == "204")
    }

    /// An exchange the sampler leaves out makes no span but still passes its
    /// context on (flag 00, a new parent: the span it would have had); a
    /// sampled parent's exchange is still traced under the parent-based sampler.
    @Test func aSampledOutExchangePassesItsContextOnAndMakesNoSpan() async throws {
        let receiver = try await OTLPReceiver.start()
        let upstream = try await TestUpstream.start()
        let gateway = try await Self.gateway(
            receiver, environment: ["OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0"]
        )
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); await receiver.stop() } }

        let result = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/echo/7")])
        #expect(result.stdoutString == "200", "\(result.stderrString)")
        let unsampled = try Self.parent(of: upstream.receivedRequests.last)
        #expect(unsampled.flags == "00", "not sampled at ratio 0")
        #expect(unsampled.trace.count == 32 && unsampled.parent.count == 16)
        let line = try #require(gateway.logs.all.first { $0.contains("/echo/7") && $0.contains("status=200") }, "\(gateway.logs.text)")
        #expect(line.contains("trace_id=\(unsampled.trace)"), "the log line still names the trace: \(line)")

        // A client's sampled context is followed (parent-based): its exchange gets spans.
        let sampled = try await gateway.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "traceparent: \(Self.clientParent)", upstream.url("/echo/8"),
        ])
        #expect(sampled.stdoutString == "200", "\(sampled.stderrString)")
        let spans = await receiver.trace(Self.clientTrace)
        #expect(spans.contains(where: { $0.isServer }), "\(spans) \(receiver.log)")
        // The unsampled exchange came first: had it made spans, they would have been exported by now.
        #expect(receiver.spans.allSatisfy { $0.traceID != unsampled.trace })
    }

    @Test func aRetriedRequestHasACLIENTSpanPerAttempt() async throws {
        let receiver = try await OTLPReceiver.start()
        let upstream = try await TestUpstream.start()
        let gateway = try await Self.gateway(receiver, retry: RetryAndRateLimitTests.fastRetry)
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); await receiver.stop() } }
        _ = RetryAndRateLimitTests.failing(upstream, times: 1)

        let result = try await gateway.curl(["-w", " %{http_code}", "-H", "traceparent: \(Self.clientParent)", upstream.url("/custom/flaky")])
        #expect(result.stdoutString == "ok\n 200", "\(result.stderrString)")

        let parents = try upstream.receivedRequests.map { try Self.parent(of: $0) }
        #expect(parents.count == 2 && parents.allSatisfy { $0.trace == Self.clientTrace })
        #expect(Set(parents.map { $0.parent }).count == 2, "each attempt has its own span")

        let spans = await receiver.trace(Self.clientTrace, clients: 2)
        let server = try #require(spans.first(where: { $0.isServer }), "\(spans) \(receiver.log)")
        let clients = spans.filter({ $0.isClient }).sorted { $0.start < $1.start }
        try #require(clients.count == 2, "\(spans)")
        #expect(clients.allSatisfy { $0.parentSpanID == server.spanID })
        #expect(clients.map(\.spanID) == parents.map { $0.parent })
        #expect(clients[0].attributes["http.response.status_code"] == "503")
        #expect(clients[0].attributes["error.type"] == "503")
        #expect(clients[0].attributes["gateway.retry.reason"] == "status_503")
        #expect(clients[0].status == 2)
        #expect(clients[1].attributes["http.request.resend_count"] == "1")
        #expect(clients[1].attributes["http.response.status_code"] == "200")
        #expect(server.attributes["gateway.attempts"] == "2")
        #expect(server.attributes["http.response.status_code"] == "200")
        #expect(server.events.contains { $0.name == "gateway.retry.backoff" && $0.attributes["gateway.retry.reason"] == "status_503" }, "\(server.events)")
    }

    /// A gateway tracing to a fresh collector that intercepts `localhost` for
    /// a TLS test upstream; the gateway's CA is at `dir/state/ca.pem`.
    static func interceptedWithTracing() async throws -> (OTLPReceiver, TestUpstream, GatewayHarness, String) {
        let receiver = try await OTLPReceiver.start()
        let pki = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-tracing")
        let paths = try pki.write(to: dir)
        let upstream = try await TestUpstream.start(tls: try pki.makeServerContext())
        let gateway = try await GatewayHarness.start { config in
            config.tracing = try Self.tracing(receiver)
            config.upstreams = [UpstreamConfig(
                name: "api", hosts: [HostPattern("localhost")!], tls: UpstreamTLSSettings(caFile: paths.caBundle), intercept: true
            )]
            config.access.connectPorts = [upstream.port]
            config.interception = InterceptionConfig(stateDir: "\(dir)/state")
        }
        return (receiver, upstream, gateway, dir)
    }

    @Test func anInterceptedHTTPSRequestIsTracedInsideTheTunnel() async throws {
        let (receiver, upstream, gateway, dir) = try await Self.interceptedWithTracing()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); await receiver.stop() } }

        let result = try await gateway.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "--cacert", "\(dir)/state/ca.pem", "-H", "traceparent: \(Self.clientParent)",
            "https://localhost:\(upstream.port)/echo?n=1",
        ])
        #expect(result.stdoutString == "200", "\(result.stderrString)\n\(gateway.logs.text)")
        let seen = try Self.parent(of: upstream.receivedRequests.last)
        #expect(seen.trace == Self.clientTrace && seen.parent != Self.clientSpan)

        let spans = await receiver.trace(Self.clientTrace)
        let server = try #require(spans.first(where: { $0.isServer }), "\(spans) \(receiver.log)")
        let client = try #require(spans.first(where: { $0.isClient }))
        #expect(server.parentSpanID == Self.clientSpan)
        #expect(client.parentSpanID == server.spanID && client.spanID == seen.parent)
        #expect(server.attributes["url.scheme"] == "https")
        #expect(server.attributes["server.address"] == "localhost")
        #expect(server.attributes["server.port"] == String(upstream.port))
        #expect(client.attributes["url.full"] == "https://localhost:\(upstream.port)/echo?n=", "query values dropped")
    }

    /// Issue 54: through an intercepted host, no query value reaches a span,
    /// whatever its name (the trace file's list named `access_token` and
    /// `api_key` only): `url.query` and `url.full` keep the names, as the log line does.
    @Test func noQueryValueOfAnInterceptedRequestReachesASpan() async throws {
        let (receiver, upstream, gateway, dir) = try await Self.interceptedWithTracing()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); await receiver.stop() } }

        let names = ["access_token", "api_key", "sig", "password", "refresh_token", "id_token", "key", "X-Amz-Signature", "X-Amz-Credential"]
        let values = names.indices.map { "qv\($0)-\(Self.secretQueryValue)" }
        let query = zip(names, values).map { "\($0)=\($1)" }.joined(separator: "&")
        let result = try await gateway.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "--cacert", "\(dir)/state/ca.pem", "-H", "traceparent: \(Self.clientParent)",
            "https://localhost:\(upstream.port)/echo?\(query)",
        ])
        #expect(result.stdoutString == "200", "\(result.stderrString)\n\(gateway.logs.text)")
        #expect(upstream.receivedRequests.last?.target.contains(values[2]) == true, "the origin gets the query as sent")

        let spans = await receiver.trace(Self.clientTrace)
        let server = try #require(spans.first(where: { $0.isServer }), "\(spans) \(receiver.log)")
        let client = try #require(spans.first(where: { $0.isClient }), "\(spans)")
        let kept = names.map { "\($0)=" }.joined(separator: "&")
        #expect(server.attributes["url.query"] == kept)
        #expect(client.attributes["url.full"] == "https://localhost:\(upstream.port)/echo?\(kept)")
        for span in spans {
            for value in span.attributes.values { #expect(!value.contains(Self.secretQueryValue), "\(span)") }
        }
        // What the exchange's log line writes of the same query.
        let line = try #require(gateway.logs.all.first { $0.contains("/echo?") && $0.contains("status=200") }, "\(gateway.logs.text)")
        #expect(line.contains("/echo?\(kept)"), "\(line)")
    }

    /// Issue 54: `OTEL_EXPORTER_OTLP_ENDPOINT` with a query: spans go to
    /// `/v1/traces` with the query after it (not `?...&/v1/traces`), and the
    /// start-up line names the collector without the query's values.
    @Test func anEndpointWithAQueryGetsTheSignalPathAndIsShownWithoutItsValues() async throws {
        let receiver = try await OTLPReceiver.start()
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.tracing = try Self.tracing(receiver, ["OTEL_EXPORTER_OTLP_ENDPOINT": "\(receiver.baseURL)?tenant=t1&api_key=\(Self.secretQueryValue)"])
            config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); await receiver.stop() } }

        let result = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "traceparent: \(Self.clientParent)", upstream.url("/status/200")])
        #expect(result.stdoutString == "200", "\(result.stderrString)")
        let spans = await receiver.trace(Self.clientTrace)
        let server = try #require(spans.first(where: { $0.isServer }), "\(spans) \(receiver.log)")
        #expect(server.path == "/v1/traces?tenant=t1&api_key=\(Self.secretQueryValue)", "the query is the collector's: sent as configured")

        let line = try #require(gateway.logs.all.first { $0.contains("tracing on: spans to") }, "\(gateway.logs.text)")
        #expect(line.contains("spans to \(receiver.baseURL)/v1/traces?tenant=&api_key= (OTLP/HTTP)"), "\(line)")
        #expect(!gateway.logs.text.contains(Self.secretQueryValue), "\(gateway.logs.text)")
    }

    @Test func aStoppedCollectorLeavesRequestsAloneAndItsDropsAreCounted() async throws {
        let receiver = try await OTLPReceiver.start()
        let upstream = try await TestUpstream.start()
        let gateway = try await Self.gateway(receiver)
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); await receiver.stop() } }

        _ = try await gateway.curl(["-o", "/dev/null", upstream.url("/status/200")])
        let before = await receiver.waitForSpans { $0.contains(where: { $0.isServer }) }
        #expect(before.contains(where: { $0.isServer }), "\(receiver.log)")
        await receiver.stop()

        for _ in 0..<20 {
            let result = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", upstream.url("/status/200")])
            #expect(result.stdoutString == "200", "\(result.stderrString)")
        }
        // The next batches fail to export (at once, or once the exporter's 10 s
        // timeout passes while it retries the connection): their spans are counted.
        var dropped = 0.0
        let deadline = ContinuousClock.now + .seconds(45)
        while dropped == 0, ContinuousClock.now < deadline {
            let text = try await ProcessRunner.run("curl", ["-sS", "\(gateway.adminURL)/metrics"]).stdoutString
            dropped = text.split(separator: "\n").filter { $0.hasPrefix("gateway_trace_spans_dropped_total{") }
                .reduce(0) { $0 + (Double($1.split(separator: " ").last ?? "") ?? 0) }
            if dropped == 0 { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(dropped >= 2, "\(gateway.logs.text)")
        #expect(gateway.logs.text.contains("tracing: spans not exported: the collector did not take them"), "logged (at most once a minute)")
    }

    @Test func withTracingOffTheClientsTraceparentGoesThroughUntouched() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        _ = try await gateway.curl(["-o", "/dev/null", "-H", "traceparent: \(Self.clientParent)", upstream.url("/status/200")])
        #expect(upstream.receivedRequests.last?.header("traceparent") == Self.clientParent)
        #expect(!gateway.logs.text.contains("trace_id="))
    }

    /// The real executable, configured by the standard variables alone: its
    /// spans carry OTEL_SERVICE_NAME, and those still queued at SIGTERM are
    /// exported before it exits (the export service is shut down last).
    @Test func theExecutableReadsTheOpenTelemetryVariablesAndFlushesAtExit() async throws {
        let receiver = try await OTLPReceiver.start()
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown(); await receiver.stop() } }
        let path = TestScratch.path("gw", suffix: ".yaml")
        try "listen:\n  proxy: 127.0.0.1:0\n  admin: 127.0.0.1:0\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let environment = [
            "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.baseURL, "OTEL_SERVICE_NAME": "gateway-from-env",
            // Nothing is exported on schedule during the test: only the flush at exit.
            "OTEL_BSP_SCHEDULE_DELAY": "600000",
        ]

        let check = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["check-config", path], environment: environment)
        #expect(check.status == 0, "\(check.stderrString)")
        #expect(check.stdoutString.contains("service_name: gateway-from-env  # from OTEL_SERVICE_NAME"), "\(check.stdoutString)")

        let gateway = try GatewayProcess(arguments: ["run", "--config", path], environment: environment)
        let port = try #require(await gateway.listeningPort("proxy"), "\(gateway.log)")
        let result = try await ProcessRunner.run(
            "curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-x", "http://127.0.0.1:\(port)", "-H", "traceparent: \(Self.clientParent)", upstream.url("/status/200")],
            environment: ["NO_PROXY": "", "no_proxy": ""]
        )
        #expect(result.stdoutString == "200", "\(result.stderrString) \(gateway.log)")
        #expect(receiver.spans.isEmpty, "nothing exported before the schedule or the exit")

        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit() == 0, "\(gateway.log)")
        let spans = await receiver.trace(Self.clientTrace, timeout: .seconds(10))
        let server = try #require(spans.first(where: { $0.isServer }), "\(receiver.log)\n\(gateway.log)")
        #expect(server.serviceName == "gateway-from-env")
        #expect(server.parentSpanID == Self.clientSpan)
        #expect(spans.contains(where: { $0.isClient }))
    }
}
