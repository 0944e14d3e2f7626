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
        var attributes = SpanAttributes()
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

    /// The most attributes a SERVER span, a CLIENT span has: room made for
    /// them at once (the keys of each are distinct, appended in order).
    static let serverAttributeCapacity = 16
    static let clientAttributeCapacity = 12

    init(_ inputs: Inputs, redactor: TraceRedactor) {
        let request = inputs.request
        let target = redactor.redactedTarget(request.target)
        let route = SpanAttribute.string(inputs.route)

        var server = Planned(attributes: SpanAttributes(capacity: Self.serverAttributeCapacity), end: inputs.end)
        Self.addMethod(request.method, to: &server.attributes)
        Self.addClientSide(of: request, redactedTarget: target, to: &server.attributes)
        server.attributes.append("http.route", route)
        server.attributes.append("network.protocol.version", .string(Self.protocolVersion(request.version)))
        if let address = Self.host(ofEndpoint: inputs.clientAddress) { server.attributes.append("client.address", .string(address)) }
        server.attributes.append("gateway.request_id", .string(inputs.requestID))
        if let upstream = request.upstreamName { server.attributes.append("gateway.upstream", .string(upstream)) }
        server.attributes.append("gateway.attempts", .int64(Int64(inputs.attempts.count)))
        let outcome = inputs.outcome
        if let status = outcome.status { server.attributes.append("http.response.status_code", .int64(Int64(status))) }
        // A server span's 4xx is the client's doing, not an error of the exchange.
        let serverError = outcome.error?.rawValue ?? outcome.status.flatMap { $0 >= 500 ? String($0) : nil }
        if let serverError {
            server.attributes.append("error.type", .string(serverError))
            server.status = SpanStatus(code: .error, message: serverError)
        } else if outcome.cancelled {
            server.attributes.append("gateway.cancelled", .bool(true))
        }
        server.events.reserveCapacity(inputs.waits.count + inputs.retries.count)
        for wait in inputs.waits {
            server.events.append(Event(name: wait.kind.eventName, at: wait.start, attributes: Self.duration(wait.end - wait.start)))
        }
        for retry in inputs.retries {
            var attributes = Self.duration(retry.backoff, room: 2)
            attributes.append("gateway.retry.reason", .string(retry.reason))
            server.events.append(Event(name: "gateway.retry.backoff", at: retry.at, attributes: attributes))
        }
        self.server = server

        var clients: [Planned] = []
        clients.reserveCapacity(inputs.clientAttempts.count)
        if !inputs.clientAttempts.isEmpty {
            // One URL, one method, one address for every attempt: made once, shared.
            let upstreamURL = SpanAttribute.string(Self.url(scheme: request.scheme.rawValue, authority: request.authority, target: target))
            let host = SpanAttribute.string(request.host)
            let port = SpanAttribute.int64(Int64(request.port))
            for (resend, index) in inputs.clientAttempts.enumerated() {
                var client = Planned(attributes: SpanAttributes(capacity: Self.clientAttributeCapacity), end: inputs.end)
                Self.addMethod(request.method, to: &client.attributes)
                client.attributes.append("server.address", host)
                client.attributes.append("server.port", port)
                client.attributes.append("url.full", upstreamURL)
                client.attributes.append("http.route", route)
                if resend > 0 { client.attributes.append("http.request.resend_count", .int64(Int64(resend))) }
                if inputs.attempts.indices.contains(index) {
                    let attempt = inputs.attempts[index]
                    Self.describe(attempt, retry: inputs.retries.first { $0.attempt == index }, into: &client)
                } else {
                    // Prepared, never sent (the exchange ended first).
                    client.attributes.append("error.type", .string("not_sent"))
                    client.status = SpanStatus(code: .error, message: "not_sent")
                }
                clients.append(client)
            }
        }
        self.clients = clients
    }

    /// An attempt's outcome, phases and retry on its CLIENT span.
    private static func describe(_ attempt: AttemptTimings, retry: AttemptRetry?, into client: inout Planned) {
        client.attributes.append("gateway.connection.reused", .bool(attempt.reusedConnection))
        if let status = attempt.status { client.attributes.append("http.response.status_code", .int64(Int64(status))) }
        // A client span's 4xx is an error of the call.
        let error = attempt.errorCode?.rawValue ?? attempt.status.flatMap { $0 >= 400 ? String($0) : nil }
        if let error {
            client.attributes.append("error.type", .string(error))
            client.status = SpanStatus(code: .error, message: error)
        }
        if let retry { client.attributes.append("gateway.retry.reason", .string(retry.reason)) }
        let phases = (attempt.connectStart != nil ? 1 : 0) + (attempt.tlsStart != nil ? 1 : 0)
        if phases > 0 { client.events.reserveCapacity(phases) }
        if let start = attempt.connectStart, let connect = attempt.connect {
            client.events.append(Event(name: "gateway.connect", at: start, attributes: duration(connect)))
        }
        if let start = attempt.tlsStart, let tls = attempt.tls {
            client.events.append(Event(name: "gateway.tls", at: start, attributes: duration(tls)))
        }
        if let end = attempt.end { client.end = end }
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
