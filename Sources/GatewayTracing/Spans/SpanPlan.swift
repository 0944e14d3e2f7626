import GatewayCore
import GatewayObservability

/// What the spans of one finished exchange say: the SERVER span's and each
/// CLIENT span's attributes, events, status and end, made from the request as
/// routed, the exchange record (attempts with their phases, the retry
/// planner's decisions), the waits the steps took and the outcome.
///
/// ``describe(_:redactor:into:)`` says it to a ``SpanSink`` as it goes:
/// ``ExchangeSpans`` encodes the spans for export so, once the exchange is
/// over, with nothing built in between. A plan (``init(_:redactor:)``) keeps
/// what it says as values, for the tests.
///
/// Attributes follow OpenTelemetry's HTTP semantic conventions (the stable
/// `http.*`, `url.*`, `server.*` names) plus the gateway's own under
/// `gateway.`. URLs are redacted by the debug traces' rules (always on:
/// ``TraceRedactor/alwaysRedacting(config:)``); no header, cookie or
/// credential is ever an attribute.
struct SpanPlan: Sendable {
    /// A point in a span's time line, and what happened there.
    struct Event: Sendable, Equatable {
        var name: String
        var at: ContinuousClock.Instant
        var attributes: SpanAttributes
    }

    /// One span as it ends.
    struct Planned: Sendable {
        var attributes = SpanAttributes()
        var events: [Event] = []
        var status: SpanStatus?
        /// Nil until the span is ended.
        var end: ContinuousClock.Instant?
    }

    /// What the plan is made from.
    struct Inputs: Sendable {
        /// The request as routed (before credentials).
        var request: ProxyRequest
        /// Its endpoint template (`/users/{id}`).
        var route: String
        var requestID: String
        /// The client's `ip:port`.
        var clientAddress: String
        var attempts: AttemptList
        var retries: [AttemptRetry]
        var waits: [RecordedWait]
        /// For each CLIENT span started, in order, the record's attempt it became.
        var clientAttempts: SmallList<Int>
        var outcome: ExchangeOutcome
        /// When the exchange ended.
        var end: ContinuousClock.Instant
    }

    var server: Planned
    /// In the order the CLIENT spans were started.
    var clients: [Planned]

    /// What ``describe(_:redactor:into:)`` says, kept.
    init(_ inputs: Inputs, redactor: TraceRedactor) {
        var spans = PlannedSpans()
        Self.describe(inputs, redactor: redactor, into: &spans)
        server = spans.server ?? Planned()
        clients = spans.clients
    }

    /// The exchange's spans, said to `sink`: the SERVER span, then a CLIENT
    /// span for each of `inputs.clientAttempts`, in order.
    static func describe<Sink: SpanSink>(_ inputs: Inputs, redactor: TraceRedactor, into sink: inout Sink) {
        let request = inputs.request
        let target = redactor.redactedTarget(request.target)
        let route = SpanAttribute.string(inputs.route)

        sink.beginServer()
        addMethod(request.method, to: &sink)
        addClientSide(of: request, redactedTarget: target, to: &sink)
        sink.attribute("http.route", route)
        sink.attribute("network.protocol.version", .string(protocolVersion(request.version)))
        if let address = host(ofEndpoint: inputs.clientAddress) { sink.attribute("client.address", .string(address)) }
        sink.attribute("gateway.request_id", .string(inputs.requestID))
        if let upstream = request.upstreamName { sink.attribute("gateway.upstream", .string(upstream)) }
        sink.attribute("gateway.attempts", .int64(Int64(inputs.attempts.count)))
        let outcome = inputs.outcome
        if let status = outcome.status { sink.attribute("http.response.status_code", .int64(Int64(status))) }
        // A server span's 4xx is the client's doing, not an error of the exchange.
        let serverError = outcome.error?.rawValue ?? outcome.status.flatMap { $0 >= 500 ? String($0) : nil }
        if let serverError {
            sink.attribute("error.type", .string(serverError))
            sink.status(SpanStatus(code: .error, message: serverError))
        } else if outcome.cancelled {
            sink.attribute("gateway.cancelled", .bool(true))
        }
        for wait in inputs.waits {
            sink.event(Event(name: wait.kind.eventName, at: wait.start, attributes: duration(wait.end - wait.start)))
        }
        for retry in inputs.retries {
            var attributes = duration(retry.backoff, room: 2)
            attributes.append("gateway.retry.reason", .string(retry.reason))
            sink.event(Event(name: "gateway.retry.backoff", at: retry.at, attributes: attributes))
        }
        sink.end(at: inputs.end)

        guard !inputs.clientAttempts.isEmpty else { return }
        // One authority, one address for every attempt: made once, shared.
        let authority = request.authority
        let host = SpanAttribute.string(request.host)
        let port = SpanAttribute.int64(Int64(request.port))
        for (resend, index) in inputs.clientAttempts.enumerated() {
            sink.beginClient(resend)
            addMethod(request.method, to: &sink)
            sink.attribute("server.address", host)
            sink.attribute("server.port", port)
            sink.urlAttribute("url.full", scheme: request.scheme.rawValue, authority: authority, target: target)
            sink.attribute("http.route", route)
            if resend > 0 { sink.attribute("http.request.resend_count", .int64(Int64(resend))) }
            guard inputs.attempts.indices.contains(index) else {
                // Prepared, never sent (the exchange ended first).
                sink.attribute("error.type", .string("not_sent"))
                sink.status(SpanStatus(code: .error, message: "not_sent"))
                sink.end(at: inputs.end)
                continue
            }
            let attempt = inputs.attempts[index]
            describe(attempt, retry: inputs.retries.first { $0.attempt == index }, into: &sink)
            sink.end(at: attempt.end ?? inputs.end)
        }
    }

    /// An attempt's outcome, phases and retry on its CLIENT span.
    private static func describe<Sink: SpanSink>(_ attempt: AttemptTimings, retry: AttemptRetry?, into sink: inout Sink) {
        sink.attribute("gateway.connection.reused", .bool(attempt.reusedConnection))
        if let status = attempt.status { sink.attribute("http.response.status_code", .int64(Int64(status))) }
        // A client span's 4xx is an error of the call.
        let error = attempt.errorCode?.rawValue ?? attempt.status.flatMap { $0 >= 400 ? String($0) : nil }
        if let error {
            sink.attribute("error.type", .string(error))
            sink.status(SpanStatus(code: .error, message: error))
        }
        if let retry { sink.attribute("gateway.retry.reason", .string(retry.reason)) }
        if let start = attempt.connectStart, let connect = attempt.connect {
            sink.event(Event(name: "gateway.connect", at: start, attributes: duration(connect)))
        }
        if let start = attempt.tlsStart, let tls = attempt.tls {
            sink.event(Event(name: "gateway.tls", at: start, attributes: duration(tls)))
        }
    }

    /// `gateway.duration_ms`: an event's length; `room` for the attributes the event adds.
    private static func duration(_ duration: Duration, room: Int = 1) -> SpanAttributes {
        let (seconds, attoseconds) = duration.components
        var attributes = SpanAttributes(capacity: room)
        attributes.append("gateway.duration_ms", .double(Double(seconds) * 1000 + Double(attoseconds) / 1e15))
        return attributes
    }
}

/// A wait a step took before an attempt (``WaitTimingStep``).
struct RecordedWait: Sendable, Equatable {
    var kind: TracedWait
    var start: ContinuousClock.Instant
    var end: ContinuousClock.Instant
}

/// The steps whose waits the exchange's span shows as events.
public enum TracedWait: Sendable, Equatable {
    /// A local rate limit's queue, or an upstream's pause (`rate_limit`).
    case rateLimit
    /// An OAuth2 token being fetched, before an attempt or after a 401 (`auth: oauth2`).
    case tokenRefresh

    var eventName: String {
        switch self {
        case .rateLimit: "gateway.rate_limit.wait"
        case .tokenRefresh: "gateway.token_refresh.wait"
        }
    }
}
