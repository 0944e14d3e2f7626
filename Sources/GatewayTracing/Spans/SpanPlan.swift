import GatewayCore
import GatewayObservability

/// What the spans of one finished exchange say: the SERVER span's and each
/// CLIENT span's attributes, events, status and end, made from the request as
/// routed, the exchange record (attempts with their phases, the retry
/// planner's decisions), the waits the steps took and the outcome. Written
/// into a sink (``SpanFieldSink``) as it is decided, once the exchange is
/// over: ``ExchangeSpans`` has it write each span straight as protobuf
/// (``OTLPSpanWriter``), the tests collect it.
///
/// Attributes follow OpenTelemetry's HTTP semantic conventions (the stable
/// `http.*`, `url.*`, `server.*` names) plus the gateway's own under
/// `gateway.`. URLs are redacted by the debug traces' rules (always on:
/// ``TraceRedactor/alwaysRedacting(config:)``); no header, cookie or
/// credential is ever an attribute.
struct SpanPlan: Sendable {
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
        var outcome: ExchangeOutcome
        /// When the exchange ended.
        var end: ContinuousClock.Instant
    }

    /// An event's length, in milliseconds (a double).
    static let durationKey: StaticString = "gateway.duration_ms"
    /// Why an attempt was given up for another: a CLIENT span's attribute, a backoff event's.
    static let retryReasonKey: StaticString = "gateway.retry.reason"

    let inputs: Inputs
    /// The request's target, redacted: both kinds of span show it.
    let target: String

    init(_ inputs: Inputs, redactor: TraceRedactor) {
        self.inputs = inputs
        self.target = redactor.redactedTarget(inputs.request.target)
    }

    // MARK: SERVER

    /// When the SERVER span ends: with the exchange.
    var serverEnd: ContinuousClock.Instant { inputs.end }

    /// The SERVER span: the request as the client made it, the outcome, the
    /// waits and backoffs as events; an error status for a gateway error or a 5xx.
    func writeServer<Sink: SpanFieldSink>(into sink: inout Sink) {
        let request = inputs.request
        Self.addMethod(request.method, to: &sink)
        Self.addClientSide(of: request, redactedTarget: target, to: &sink)
        sink.attribute("http.route", string: inputs.route)
        sink.attribute("network.protocol.version", string: Self.protocolVersion(request.version))
        if let address = Self.host(ofEndpoint: inputs.clientAddress) { sink.attribute("client.address", string: address) }
        sink.attribute("gateway.request_id", string: inputs.requestID)
        if let upstream = request.upstreamName { sink.attribute("gateway.upstream", string: upstream) }
        sink.attribute("gateway.attempts", int: Int64(inputs.attempts.count))
        let outcome = inputs.outcome
        if let status = outcome.status { sink.attribute("http.response.status_code", int: Int64(status)) }
        // A server span's 4xx is the client's doing, not an error of the exchange.
        let serverError = outcome.error?.rawValue ?? outcome.status.flatMap { $0 >= 500 ? String($0) : nil }
        if let serverError {
            sink.attribute("error.type", string: serverError)
        } else if outcome.cancelled {
            sink.attribute("gateway.cancelled", bool: true)
        }
        for wait in inputs.waits {
            sink.event(wait.kind.eventName, at: wait.start, duration: wait.end - wait.start, retryReason: nil)
        }
        for retry in inputs.retries {
            sink.event("gateway.retry.backoff", at: retry.at, duration: retry.backoff, retryReason: retry.reason)
        }
        if let serverError { sink.status(SpanStatus(code: .error, message: serverError)) }
    }

    // MARK: CLIENT

    /// When the CLIENT span of the record's attempt `index` ends: with its
    /// attempt, or with the exchange (an attempt that did not end, or never was).
    func clientEnd(attempt index: Int) -> ContinuousClock.Instant {
        guard inputs.attempts.indices.contains(index), let end = inputs.attempts[index].end else { return inputs.end }
        return end
    }

    /// The CLIENT span of the record's attempt `index`, the `resend`th
    /// started (0 for the first): the request as sent upstream, the attempt's
    /// outcome, phases and retry; an attempt prepared but never sent (the
    /// exchange ended first) is `not_sent`.
    func writeClient<Sink: SpanFieldSink>(resend: Int, attempt index: Int, into sink: inout Sink) {
        let request = inputs.request
        Self.addMethod(request.method, to: &sink)
        sink.attribute("server.address", string: request.host)
        sink.attribute("server.port", int: Int64(request.port))
        sink.attribute("url.full", url: UpstreamURL(scheme: request.scheme, host: request.host, port: request.port, target: target))
        sink.attribute("http.route", string: inputs.route)
        if resend > 0 { sink.attribute("http.request.resend_count", int: Int64(resend)) }
        if inputs.attempts.indices.contains(index) {
            Self.describe(inputs.attempts[index], retry: inputs.retries.first { $0.attempt == index }, into: &sink)
        } else {
            let notSent: String = "not_sent"
            sink.attribute("error.type", string: notSent)
            sink.status(SpanStatus(code: .error, message: notSent))
        }
    }

    /// An attempt's outcome, phases and retry on its CLIENT span.
    private static func describe<Sink: SpanFieldSink>(_ attempt: AttemptTimings, retry: AttemptRetry?, into sink: inout Sink) {
        sink.attribute("gateway.connection.reused", bool: attempt.reusedConnection)
        if let status = attempt.status { sink.attribute("http.response.status_code", int: Int64(status)) }
        // A client span's 4xx is an error of the call.
        let error = attempt.errorCode?.rawValue ?? attempt.status.flatMap { $0 >= 400 ? String($0) : nil }
        if let error { sink.attribute("error.type", string: error) }
        if let retry { sink.attribute(retryReasonKey, string: retry.reason) }
        if let start = attempt.connectStart, let connect = attempt.connect {
            sink.event("gateway.connect", at: start, duration: connect, retryReason: nil)
        }
        if let start = attempt.tlsStart, let tls = attempt.tls {
            sink.event("gateway.tls", at: start, duration: tls, retryReason: nil)
        }
        if let error { sink.status(SpanStatus(code: .error, message: error)) }
    }

    /// `gateway.duration_ms`: an event's length.
    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
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

    var eventName: StaticString {
        switch self {
        case .rateLimit: "gateway.rate_limit.wait"
        case .tokenRefresh: "gateway.token_refresh.wait"
        }
    }
}
