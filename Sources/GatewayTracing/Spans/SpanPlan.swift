import GatewayCore
import GatewayObservability

/// What the spans of one finished exchange say: the SERVER span's and each
/// CLIENT span's attributes, events, status and end, made from the request as
/// routed, the exchange record (attempts with their phases, the retry
/// planner's decisions), the waits the steps took and the outcome. A pure
/// value, built once the exchange is over (``ExchangeSpans``, which makes the
/// exported spans from it) and tested on its own.
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
        var attributes: SpanAttributes = [:]
        var events: [Event] = []
        var status: SpanStatus?
        var end: ContinuousClock.Instant
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
        var clientAttempts: [Int]
        var outcome: ExchangeOutcome
        /// When the exchange ended.
        var end: ContinuousClock.Instant
    }

    var server: Planned
    /// In the order the CLIENT spans were started.
    var clients: [Planned]

    init(_ inputs: Inputs, redactor: TraceRedactor) {
        let request = inputs.request
        let target = redactor.redactedTarget(request.target)
        let method = Self.methodAttributes(request.method)

        var server = Planned(end: inputs.end)
        server.attributes.merge(method)
        server.attributes.merge(Self.clientSide(of: request, redactedTarget: target))
        server.attributes.set("http.route", value: .string(inputs.route))
        server.attributes.set("network.protocol.version", value: .string(Self.protocolVersion(request.version)))
        if let address = Self.host(ofEndpoint: inputs.clientAddress) { server.attributes.set("client.address", value: .string(address)) }
        server.attributes.set("gateway.request_id", value: .string(inputs.requestID))
        if let upstream = request.upstreamName { server.attributes.set("gateway.upstream", value: .string(upstream)) }
        server.attributes.set("gateway.attempts", value: .int64(Int64(inputs.attempts.count)))
        let outcome = inputs.outcome
        if let status = outcome.status { server.attributes.set("http.response.status_code", value: .int64(Int64(status))) }
        // A server span's 4xx is the client's doing, not an error of the exchange.
        let serverError = outcome.error?.rawValue ?? outcome.status.flatMap { $0 >= 500 ? String($0) : nil }
        if let serverError {
            server.attributes.set("error.type", value: .string(serverError))
            server.status = SpanStatus(code: .error, message: serverError)
        } else if outcome.cancelled {
            server.attributes.set("gateway.cancelled", value: .bool(true))
        }
        for wait in inputs.waits {
            server.events.append(Event(name: wait.kind.eventName, at: wait.start, attributes: Self.duration(wait.end - wait.start)))
        }
        for retry in inputs.retries {
            var attributes = Self.duration(retry.backoff)
            attributes.set("gateway.retry.reason", value: .string(retry.reason))
            server.events.append(Event(name: "gateway.retry.backoff", at: retry.at, attributes: attributes))
        }

        let upstreamURL = "\(request.scheme.rawValue)://\(request.authority)\(target)"
        clients = inputs.clientAttempts.enumerated().map { pair -> Planned in
            let (resend, index) = (pair.offset, pair.element)
            var client = Planned(end: inputs.end)
            client.attributes.merge(method)
            client.attributes.set("server.address", value: .string(request.host))
            client.attributes.set("server.port", value: .int64(Int64(request.port)))
            client.attributes.set("url.full", value: .string(upstreamURL))
            client.attributes.set("http.route", value: .string(inputs.route))
            if resend > 0 { client.attributes.set("http.request.resend_count", value: .int64(Int64(resend))) }
            guard inputs.attempts.indices.contains(index) else {
                // Prepared, never sent (the exchange ended first).
                client.attributes.set("error.type", value: .string("not_sent"))
                client.status = SpanStatus(code: .error, message: "not_sent")
                return client
            }
            let attempt = inputs.attempts[index]
            Self.describe(attempt, retry: inputs.retries.first { $0.attempt == index }, into: &client)
            return client
        }
        self.server = server
    }

    /// An attempt's outcome, phases and retry on its CLIENT span.
    private static func describe(_ attempt: AttemptTimings, retry: AttemptRetry?, into client: inout Planned) {
        client.attributes.set("gateway.connection.reused", value: .bool(attempt.reusedConnection))
        if let status = attempt.status { client.attributes.set("http.response.status_code", value: .int64(Int64(status))) }
        // A client span's 4xx is an error of the call.
        let error = attempt.errorCode?.rawValue ?? attempt.status.flatMap { $0 >= 400 ? String($0) : nil }
        if let error {
            client.attributes.set("error.type", value: .string(error))
            client.status = SpanStatus(code: .error, message: error)
        }
        if let retry { client.attributes.set("gateway.retry.reason", value: .string(retry.reason)) }
        if let start = attempt.connectStart, let connect = attempt.connect {
            client.events.append(Event(name: "gateway.connect", at: start, attributes: duration(connect)))
        }
        if let start = attempt.tlsStart, let tls = attempt.tls {
            client.events.append(Event(name: "gateway.tls", at: start, attributes: duration(tls)))
        }
        if let end = attempt.end { client.end = end }
    }

    /// `gateway.duration_ms`: an event's length.
    private static func duration(_ duration: Duration) -> SpanAttributes {
        let (seconds, attoseconds) = duration.components
        var attributes: SpanAttributes = [:]
        attributes.set("gateway.duration_ms", value: .double(Double(seconds) * 1000 + Double(attoseconds) / 1e15))
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
