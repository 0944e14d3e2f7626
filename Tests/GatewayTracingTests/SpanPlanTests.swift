import GatewayConfig
import GatewayCore
import GatewayObservability
import NIOHTTP1
import Testing

@testable import GatewayTracing

/// The spans of a finished exchange, built from a synthetic exchange record:
/// attributes as the HTTP semantic conventions name them, one CLIENT span per
/// attempt with its phases and retry, the waits as events, nothing secret.
@Suite struct SpanPlanTests {
    static let t0 = ContinuousClock.now

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { t0 + .milliseconds(milliseconds) }

    static func request(target: String = "/users/42?token=s3cr3t-token&page=2&sig=abc") -> ProxyRequest {
        var request = ProxyRequest(
            method: .GET, scheme: .http, host: "api.test", port: 80, target: target,
            headers: RequestFields([("Authorization", "Bearer s3cr3t-bearer"), ("Cookie", "session=s3cr3t-cookie")]), upstreamName: "api"
        )
        request.version = .http1_1
        return request
    }

    static var redactor: TraceRedactor {
        var config = GatewayConfig()
        config.trace.redact = false  // telemetry redacts whatever the trace file is told
        config.trace.redactQuery = ["sig"]
        return TraceRedactor.alwaysRedacting(config: config)
    }

    /// A retried exchange: a 503 on a new connection (connect, TLS), a backoff, then a 200 on the same connection.
    static func retried() -> PlannedExchange.Inputs {
        var first = AttemptTimings(started: at(2))
        first.connectStart = at(3)
        first.connectEnd = at(5)
        first.tlsStart = at(5)
        first.tlsEnd = at(9)
        first.responseHead = at(12)
        first.status = 503
        first.end = at(13)
        var second = AttemptTimings(started: at(24), reusedConnection: true)
        second.responseHead = at(30)
        second.status = 200
        second.end = at(31)
        return PlannedExchange.Inputs(
            request: request(), route: "/users/{id}", requestID: "1x-7", clientAddress: "127.0.0.1:50123",
            attempts: AttemptList([first, second]),
            retries: [AttemptRetry(attempt: 0, reason: "status_503", at: at(13), backoff: .milliseconds(10))],
            waits: [RecordedWait(kind: .rateLimit, start: at(0), end: at(2))],
            clientAttempts: [0, 1], outcome: ExchangeOutcome(status: 200, responseBytes: 12, error: nil), end: at(32)
        )
    }

    /// The export path (the request's fields encoded as the exchange begins,
    /// the rest as it ends) writes every span with the attributes the plan
    /// says, in its order, and the events and status it says.
    @Test func theExportedSpansSayWhatThePlanSays() throws {
        let inputs = Self.retried()
        let plan = PlannedExchange(inputs, redactor: Self.redactor)
        var writer = OTLPSpanWriter(capacity: 64)
        writer.beginFields()
        let target = Self.redactor.redactedTarget(inputs.request.target)
        SpanPlan.describeServerRequest(
            inputs.request, redactedTarget: target, route: inputs.route, requestID: inputs.requestID, clientAddress: inputs.clientAddress,
            into: &writer
        )
        let split = writer.bytes.count
        SpanPlan.describeClientRequest(inputs.request, redactedTarget: target, route: inputs.route, into: &writer)
        let subject = ExchangeSpans.Subject(name: "GET /users/{id}", fields: Array(writer.bytes), clientFieldsStart: split)
        writer.reset()
        var clients = SmallList<ExchangeSpans.Client>()
        clients.append(ExchangeSpans.Client(span: SpanID(value: 10), attempt: 0, started: StoredInstant(Self.at(2))))
        clients.append(ExchangeSpans.Client(span: SpanID(value: 11), attempt: 1, started: StoredInstant(Self.at(24))))
        let ids = ExchangeSpans.IDs(trace: TraceID(high: 1, low: 2), span: SpanID(value: 3), parent: nil, traceState: nil, sampled: true)
        var sink = ExchangeSpans.ExportSink(
            writer: writer, ids: ids, subject: subject, started: StoredInstant(Self.t0), clients: clients, clock: WallClock(wall: 5_000_000_000, now: StoredInstant(Self.at(32)))
        )
        SpanPlan.describe(inputs.ending, into: &sink)
        #expect(writer.count == 3)

        let spans = try ProtobufReader.fields(Array(writer.bytes)).map { try $0.message() }
        let planned = [plan.server] + plan.clients
        #expect(spans.count == planned.count)
        for (span, expected) in zip(spans, planned) {
            #expect(try Self.attributes(span.filter { $0.number == 9 }) == expected.attributes)
            #expect(try span.filter { $0.number == 11 }.map { try $0.message()[1].string() } == expected.events.map(\.name))
            #expect(try span.filter { $0.number == 15 }.map { try $0.message()[0].string() } == [expected.status?.message].compactMap { $0 })
        }
        // Times: the wall clock read at the exchange's end (32 ms), the rest placed from it.
        #expect(spans[0].first { $0.number == 7 }?.value == 5_000_000_000 - 32_000_000)
        #expect(spans[0].first { $0.number == 8 }?.value == 5_000_000_000)
        #expect(spans[1].first { $0.number == 8 }?.value == 5_000_000_000 - 19_000_000, "the first attempt ended at 13 ms")
    }

    /// `KeyValue` fields read back as attributes.
    static func attributes(_ fields: [ProtobufReader.Field]) throws -> SpanAttributes {
        var attributes = SpanAttributes()
        for field in fields {
            let pair = try field.message()
            let value = try pair[1].message()[0]
            let attribute: SpanAttribute
            switch value.number {
            case 1: attribute = .string(try value.string())
            case 2: attribute = .bool(value.value != 0)
            case 3: attribute = .int64(Int64(bitPattern: value.value))
            default: attribute = .double(Double(bitPattern: value.value))
            }
            attributes.append(try pair[0].string(), attribute)
        }
        return attributes
    }

    @Test func theServerSpanNamesTheRequestAsTheClientMadeIt() {
        let plan = PlannedExchange(Self.retried(), redactor: Self.redactor)
        let server = plan.server.attributes
        #expect(server.get("http.request.method") == .string("GET"))
        #expect(server.get("url.scheme") == .string("http"))
        #expect(server.get("server.address") == .string("api.test"))
        #expect(server.get("server.port") == .int64(80))
        #expect(server.get("url.path") == .string("/users/42"))
        #expect(server.get("url.query") == .string("token=&page=&sig="))
        #expect(server.get("http.route") == .string("/users/{id}"))
        #expect(server.get("network.protocol.version") == .string("1.1"))
        #expect(server.get("client.address") == .string("127.0.0.1"))
        #expect(server.get("http.response.status_code") == .int64(200))
        #expect(server.get("gateway.upstream") == .string("api"))
        #expect(server.get("gateway.attempts") == .int64(2))
        #expect(server.get("gateway.request_id") == .string("1x-7"))
        #expect(server.get("error.type") == nil)
        #expect(plan.server.status == nil)
        #expect(plan.server.end == Self.at(32))
        #expect(SpanPlan.name(method: .GET, route: "/users/{id}") == "GET /users/{id}")
    }

    @Test func theWaitsAndTheBackoffAreEventsOfTheServerSpan() {
        let plan = PlannedExchange(Self.retried(), redactor: Self.redactor)
        let events = plan.server.events
        #expect(events.map(\.name) == ["gateway.rate_limit.wait", "gateway.retry.backoff"])
        #expect(events[0].at == Self.at(0))
        #expect(events[0].attributes.get("gateway.duration_ms") == .double(2))
        #expect(events[1].at == Self.at(13))
        #expect(events[1].attributes.get("gateway.duration_ms") == .double(10))
        #expect(events[1].attributes.get("gateway.retry.reason") == .string("status_503"))
    }

    @Test func eachAttemptIsAClientSpanWithItsPhases() throws {
        let plan = PlannedExchange(Self.retried(), redactor: Self.redactor)
        try #require(plan.clients.count == 2)
        let first = plan.clients[0], second = plan.clients[1]
        #expect(first.attributes.get("http.request.method") == .string("GET"))
        #expect(first.attributes.get("server.address") == .string("api.test"))
        #expect(first.attributes.get("url.full") == .string("http://api.test/users/42?token=&page=&sig="))
        #expect(first.attributes.get("http.response.status_code") == .int64(503))
        #expect(first.attributes.get("error.type") == .string("503"))
        #expect(first.status == SpanStatus(code: .error, message: "503"))
        #expect(first.attributes.get("gateway.retry.reason") == .string("status_503"))
        #expect(first.attributes.get("gateway.connection.reused") == .bool(false))
        #expect(first.attributes.get("http.request.resend_count") == nil)
        #expect(first.events.map(\.name) == ["gateway.connect", "gateway.tls"])
        #expect(first.events.map(\.at) == [Self.at(3), Self.at(5)])
        #expect(first.events.compactMap { $0.attributes.get("gateway.duration_ms") } == [SpanAttribute.double(2), SpanAttribute.double(4)])
        #expect(first.end == Self.at(13))

        #expect(second.attributes.get("http.request.resend_count") == .int64(1))
        #expect(second.attributes.get("http.response.status_code") == .int64(200))
        #expect(second.attributes.get("gateway.connection.reused") == .bool(true))
        #expect(second.attributes.get("gateway.retry.reason") == nil)
        #expect(second.attributes.get("error.type") == nil && second.status == nil)
        #expect(second.events.isEmpty, "a reused connection has no connect or TLS phase")
        #expect(second.end == Self.at(31))
    }

    @Test func noSecretIsAnAttribute() {
        let plan = PlannedExchange(Self.retried(), redactor: Self.redactor)
        var texts: [String] = []
        for span in [plan.server] + plan.clients {
            span.attributes.forEach { _, value in texts.append("\(value)") }
            for event in span.events { event.attributes.forEach { _, value in texts.append("\(value)") } }
        }
        for secret in ["s3cr3t-token", "abc", "s3cr3t-bearer", "s3cr3t-cookie", "session"] {
            #expect(!texts.contains { $0.contains(secret) }, "\(secret) in \(texts)")
        }
    }

    @Test func aGatewayErrorIsTheServerSpansErrorType() {
        var inputs = Self.retried()
        var failed = AttemptTimings(started: Self.at(1))
        failed.end = Self.at(3)
        failed.errorCode = .connectFailed
        inputs.ending.attempts = AttemptList([failed])
        inputs.ending.retries = []
        inputs.ending.waits = []
        inputs.ending.clientAttempts = [0]
        inputs.ending.outcome = ExchangeOutcome(status: 502, responseBytes: 0, error: .connectFailed)
        let plan = PlannedExchange(inputs, redactor: Self.redactor)
        #expect(plan.server.attributes.get("error.type") == .string("connect_failed"))
        #expect(plan.server.status?.code == .error)
        #expect(plan.server.attributes.get("http.response.status_code") == .int64(502))
        #expect(plan.clients[0].attributes.get("error.type") == .string("connect_failed"))
        #expect(plan.clients[0].attributes.get("http.response.status_code") == nil)
    }

    @Test func aClientErrorIsNotTheServerSpansError() {
        var inputs = Self.retried()
        inputs.ending.outcome = ExchangeOutcome(status: 404, responseBytes: 0, error: nil)
        let plan = PlannedExchange(inputs, redactor: Self.redactor)
        #expect(plan.server.attributes.get("error.type") == nil)
        #expect(plan.server.status == nil)
    }

    @Test func anInterceptedRequestIsHTTPSOnTheClientSide() {
        var inputs = Self.retried()
        var request = ProxyRequest(method: .POST, scheme: .https, host: "origin.internal", port: 8443, target: "/v1/charges", headers: RequestFields())
        request.clientOrigin = "https://api.example.com"
        inputs.request = request
        let plan = PlannedExchange(inputs, redactor: Self.redactor)
        #expect(plan.server.attributes.get("url.scheme") == .string("https"))
        #expect(plan.server.attributes.get("server.address") == .string("api.example.com"))
        #expect(plan.server.attributes.get("server.port") == .int64(443))
        #expect(plan.server.attributes.get("url.query") == nil)
        #expect(plan.clients[0].attributes.get("url.full") == .string("https://origin.internal:8443/v1/charges"))
        #expect(plan.clients[0].attributes.get("server.port") == .int64(8443))
    }

    @Test func anExtensionMethodIsOther() {
        var spans = PlannedSpans()
        spans.beginServer()
        SpanPlan.addMethod(HTTPMethod(rawValue: "PROPFIND"), to: &spans)
        spans.end(at: StoredInstant(Self.t0))
        let attributes = spans.server?.attributes ?? [:]
        #expect(attributes.get("http.request.method") == .string("_OTHER"))
        #expect(attributes.get("http.request.method_original") == .string("PROPFIND"))
        #expect(SpanPlan.name(method: HTTPMethod(rawValue: "PROPFIND"), route: "/dav") == "HTTP /dav")
    }

    @Test func authoritiesSplit() {
        let named = SpanPlan.split(authority: "api.test:8080")
        #expect(named.host == "api.test" && named.port == 8080)
        let bare = SpanPlan.split(authority: "api.test")
        #expect(bare.host == "api.test" && bare.port == nil)
        let v6 = SpanPlan.split(authority: "[::1]:8443")
        #expect(v6.host == "::1" && v6.port == 8443)
        #expect(SpanPlan.host(ofEndpoint: "::1:50123") == "::1")
        #expect(SpanPlan.host(ofEndpoint: "unknown") == nil)
    }
}
