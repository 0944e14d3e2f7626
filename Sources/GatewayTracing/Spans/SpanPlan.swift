import GatewayCore
import GatewayObservability

/// What the spans of one finished exchange say: the SERVER span's and each
/// CLIENT span's attributes, events, status and end, made from the request as
/// routed, the exchange record (attempts with their phases, the retry
/// planner's decisions), the waits the steps took and the outcome.
///
/// It is said to sinks as it goes, in two parts: what the request says
/// (``describeServerRequest(_:redactedTarget:route:requestID:clientAddress:into:)``,
/// ``describeClientRequest(_:redactedTarget:route:into:)``) as the exchange
/// begins, and the rest (``describe(_:into:)``) once it is over.
/// ``ExchangeSpans`` encodes both for export as they are said, with nothing
/// built in between: the request's part while the request is at hand, not
/// read back from memory long gone cold by the exchange's end. The tests
/// keep what they say as values.
///
/// Attributes follow OpenTelemetry's HTTP semantic conventions (the stable
/// `http.*`, `url.*`, `server.*` names) plus the gateway's own under
/// `gateway.`. URLs are redacted by the debug traces' rules (always on:
/// ``TraceRedactor/alwaysRedacting(config:)``); no header, cookie or
/// credential is ever an attribute.
enum SpanPlan {
    /// A point in a span's time line, and what happened there.
    struct Event: Sendable, Equatable {
        var name: String
        var at: ContinuousClock.Instant
        var attributes: SpanAttributes
    }

    /// What is known once the exchange is over.
    struct Ending: Sendable {
        var attempts: AttemptList
        var retries: [AttemptRetry]
        var waits: [RecordedWait]
        /// For each CLIENT span started, in order, the record's attempt it became.
        var clientAttempts: SmallList<Int>
        var outcome: ExchangeOutcome
        /// When the exchange ended (kept by value: ``StoredInstant``).
        var end: StoredInstant
    }

    /// The SERVER span's attributes that the request alone says, said to
    /// `sink` as the exchange begins, while the request is at hand (the
    /// sink of ``describe(_:into:)`` opens the span with them).
    /// `target`: the request's, redacted.
    static func describeServerRequest<Sink: SpanAttributeSink>(
        _ request: ProxyRequest, redactedTarget target: String, route: String, requestID: String, clientAddress: String, into sink: inout Sink
    ) {
        addMethod(request.method, to: &sink)
        addClientSide(of: request, redactedTarget: target, to: &sink)
        sink.attribute("http.route", .string(route))
        sink.attribute("network.protocol.version", .string(protocolVersion(request.version)))
        if let address = host(ofEndpoint: clientAddress) { sink.attribute("client.address", address) }
        sink.attribute("gateway.request_id", .string(requestID))
        if let upstream = request.upstreamName { sink.attribute("gateway.upstream", .string(upstream)) }
    }

    /// Every CLIENT span's attributes that the request alone says (one URL,
    /// one method, one address for every attempt), as ``describeServerRequest(_:redactedTarget:route:requestID:clientAddress:into:)``.
    static func describeClientRequest<Sink: SpanAttributeSink>(_ request: ProxyRequest, redactedTarget target: String, route: String, into sink: inout Sink) {
        addMethod(request.method, to: &sink)
        sink.attribute("server.address", .string(request.host))
        sink.attribute("server.port", .int64(Int64(request.port)))
        let port = request.port == request.scheme.defaultPort ? nil : request.port
        sink.urlAttribute("url.full", URLPieces(scheme: request.scheme.rawValue, host: request.host, port: port, target: target))
        sink.attribute("http.route", .string(route))
    }

    /// The rest of the exchange's spans, once it is over, said to `sink`:
    /// the SERVER span, then a CLIENT span for each of `ending.clientAttempts`,
    /// in order, each opened with what the request said of it.
    static func describe<Sink: SpanSink>(_ ending: Ending, into sink: inout Sink) {
        sink.beginServer()
        sink.attribute("gateway.attempts", .int64(Int64(ending.attempts.count)))
        let outcome = ending.outcome
        if let status = outcome.status { sink.attribute("http.response.status_code", .int64(Int64(status))) }
        // A server span's 4xx is the client's doing, not an error of the exchange.
        let serverError = outcome.error?.rawValue ?? outcome.status.flatMap { $0 >= 500 ? String($0) : nil }
        if let serverError {
            sink.attribute("error.type", .string(serverError))
            sink.status(SpanStatus(code: .error, message: serverError))
        } else if outcome.cancelled {
            sink.attribute("gateway.cancelled", .bool(true))
        }
        for wait in ending.waits {
            sink.event(Event(name: wait.kind.eventName, at: wait.start, attributes: duration(wait.end - wait.start)))
        }
        for retry in ending.retries {
            var attributes = duration(retry.backoff, room: 2)
            attributes.append("gateway.retry.reason", .string(retry.reason))
            sink.event(Event(name: "gateway.retry.backoff", at: retry.at, attributes: attributes))
        }
        sink.end(at: ending.end)

        for (resend, index) in ending.clientAttempts.enumerated() {
            sink.beginClient(resend)
            if resend > 0 { sink.attribute("http.request.resend_count", .int64(Int64(resend))) }
            guard ending.attempts.indices.contains(index) else {
                // Prepared, never sent (the exchange ended first).
                sink.attribute("error.type", .string("not_sent"))
                sink.status(SpanStatus(code: .error, message: "not_sent"))
                sink.end(at: ending.end)
                continue
            }
            let attempt = ending.attempts[index]
            describe(attempt, retry: ending.retries.first { $0.attempt == index }, into: &sink)
            sink.end(at: attempt.$end ?? ending.end)
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
