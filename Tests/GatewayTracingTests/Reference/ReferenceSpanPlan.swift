import GatewayCore
import GatewayObservability
import NIOHTTP1

@testable import GatewayTracing

// Test-only: the plan as it was before it wrote into a sink, building
// attribute arrays and event values (and the HTTP helpers it used). The
// reference the new plan and writer are held to: the same exchange through
// both gives the same bytes (`OTLPSpanWriterTests`).

/// What the spans of one finished exchange said, as values (the old `SpanPlan`).
struct ReferenceSpanPlan: Sendable {
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
            server.events.append(Event(name: wait.kind.eventName.description, at: wait.start, attributes: Self.duration(wait.end - wait.start)))
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

/// The HTTP semantic conventions' names for what a request says (the old `SpanPlan+HTTP`).
extension ReferenceSpanPlan {
    /// `GET /users/{id}`: the method (`HTTP` for one the conventions do not
    /// know) and the endpoint template, the low-cardinality name both spans take.
    static func name(method: HTTPMethod, route: String) -> String {
        let method = knownMethod(method) ?? "HTTP"
        var name = ""
        name.reserveCapacity(method.utf8.count + 1 + route.utf8.count)
        name += method
        name += " "
        name += route
        return name
    }

    /// The conventions' methods by name; nil for any other (an extension method).
    static func knownMethod(_ method: HTTPMethod) -> String? {
        let label = EndpointKey.methodLabel(method)
        return label == "OTHER" ? nil : label
    }

    /// `http.request.method`, and `http.request.method_original` for `_OTHER`.
    static func methodAttributes(_ method: HTTPMethod) -> SpanAttributes {
        var attributes = SpanAttributes(capacity: 2)
        addMethod(method, to: &attributes)
        return attributes
    }

    /// ``methodAttributes(_:)`` appended to `attributes`.
    static func addMethod(_ method: HTTPMethod, to attributes: inout SpanAttributes) {
        if let known = knownMethod(method) {
            attributes.append("http.request.method", .string(known))
        } else {
            attributes.append("http.request.method", .string("_OTHER"))
            attributes.append("http.request.method_original", .string(method.rawValue))
        }
    }

    /// The request as the client made it (before an upstream's `origin`
    /// rewrote it): `url.scheme`, `server.address`, `server.port`, `url.path`,
    /// `url.query` (the redacted target's parts), appended to `attributes`.
    /// Without `clientOrigin` the client asked for the request's own scheme,
    /// host and port (what its `authority` would split back into).
    static func addClientSide(of request: ProxyRequest, redactedTarget target: String, to attributes: inout SpanAttributes) {
        if let prefix = request.clientOrigin {
            var scheme = request.scheme.rawValue
            if let colon = prefix.firstIndex(of: ":"), prefix[colon...].hasPrefix("://") { scheme = String(prefix[..<colon]) }
            attributes.append("url.scheme", .string(scheme))
            let (host, port) = split(authority: request.clientAuthority)
            attributes.append("server.address", .string(host))
            attributes.append("server.port", .int64(Int64(port ?? (scheme == "https" ? 443 : 80))))
        } else {
            attributes.append("url.scheme", .string(request.scheme.rawValue))
            attributes.append("server.address", .string(request.host))
            attributes.append("server.port", .int64(Int64(request.port)))
        }
        let bytes = target.utf8
        // By bytes when ASCII (nearly always); else by characters, as a `?` with a combining mark is not one.
        let mark = bytes.contains { $0 >= 0x80 } ? target.firstIndex(of: "?") : bytes.firstIndex(of: UInt8(ascii: "?"))
        if let mark {
            attributes.append("url.path", .string(String(target[..<mark])))
            attributes.append("url.query", .string(String(target[target.index(after: mark)...])))
        } else {
            attributes.append("url.path", .string(target))
        }
    }

    /// `scheme://authority/target`, made in one allocation.
    static func url(scheme: String, authority: String, target: String) -> String {
        var url = ""
        url.reserveCapacity(scheme.utf8.count + 3 + authority.utf8.count + target.utf8.count)
        url += scheme
        url += "://"
        url += authority
        url += target
        return url
    }

    /// `host[:port]` (IPv6 in brackets) as its host and port.
    static func split(authority: String) -> (host: String, port: Int?) {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            return (host, rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil)
        }
        guard let colon = authority.lastIndex(of: ":") else { return (authority, nil) }
        return (String(authority[..<colon]), Int(authority[authority.index(after: colon)...]))
    }

    /// The address of `ip:port` (the port always written, an IPv6 address
    /// without brackets), or nil for `unknown`.
    static func host(ofEndpoint endpoint: String) -> String? {
        guard let colon = endpoint.lastIndex(of: ":"), colon != endpoint.startIndex else { return nil }
        return String(endpoint[..<colon])
    }

    /// `network.protocol.version`: `1.1`, `1.0`, `2`.
    static func protocolVersion(_ version: HTTPVersion) -> String {
        switch (version.major, version.minor) {
        case (1, 1): return "1.1"
        case (1, 0): return "1.0"
        case (2, 0): return "2"
        default: break
        }
        return version.minor == 0 && version.major >= 2 ? "\(version.major)" : "\(version.major).\(version.minor)"
    }
}
