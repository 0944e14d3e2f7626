import GatewayCore
import GatewayObservability
import NIOCore

@testable import GatewayTracing

/// What ``SpanPlan`` says of one exchange, kept as values: both parts (the
/// request's, then the end's) said into ``PlannedSpans``, as the export path
/// says them into its writer.
struct PlannedExchange {
    /// One span as it ends.
    struct Planned {
        var attributes = SpanAttributes()
        var events: [SpanPlan.Event] = []
        var status: SpanStatus?
        /// Nil until the span is ended.
        var end: ContinuousClock.Instant?
    }

    /// An exchange, from its request to its end.
    struct Inputs {
        /// The request as routed (before credentials).
        var request: ProxyRequest
        /// Its endpoint template (`/users/{id}`).
        var route: String
        var requestID: String
        /// The client's `ip:port`.
        var clientAddress: String
        /// What the exchange's end says.
        var ending: SpanPlan.Ending

        init(
            request: ProxyRequest, route: String, requestID: String, clientAddress: String, attempts: AttemptList, retries: [AttemptRetry],
            waits: [RecordedWait], clientAttempts: SmallList<Int>, outcome: ExchangeOutcome, end: ContinuousClock.Instant
        ) {
            self.request = request
            self.route = route
            self.requestID = requestID
            self.clientAddress = clientAddress
            ending = SpanPlan.Ending(
                attempts: attempts, retries: retries, waits: waits, clientAttempts: clientAttempts, outcome: outcome, end: StoredInstant(end)
            )
        }
    }

    var server: Planned
    /// In the order the CLIENT spans were started.
    var clients: [Planned]

    init(_ inputs: Inputs, redactor: TraceRedactor) {
        let target = redactor.redactedTarget(inputs.request.target)
        var serverFields = SpanAttributes()
        SpanPlan.describeServerRequest(
            inputs.request, redactedTarget: target, route: inputs.route, requestID: inputs.requestID, clientAddress: inputs.clientAddress,
            into: &serverFields
        )
        var clientFields = SpanAttributes()
        SpanPlan.describeClientRequest(inputs.request, redactedTarget: target, route: inputs.route, into: &clientFields)
        var spans = PlannedSpans(serverFields: serverFields, clientFields: clientFields)
        SpanPlan.describe(inputs.ending, into: &spans)
        server = spans.server ?? Planned()
        clients = spans.clients
    }
}

/// The spans described, kept as ``PlannedExchange/Planned`` values.
struct PlannedSpans: SpanSink {
    var server: PlannedExchange.Planned?
    var clients: [PlannedExchange.Planned] = []
    /// What the request said of the SERVER span, and of every CLIENT span: each opens with it.
    let serverFields: SpanAttributes
    let clientFields: SpanAttributes
    /// The span open, and whether it is the SERVER span.
    private var open: (span: PlannedExchange.Planned, isServer: Bool)?

    init(serverFields: SpanAttributes = [:], clientFields: SpanAttributes = [:]) {
        self.serverFields = serverFields
        self.clientFields = clientFields
    }

    mutating func beginServer() {
        open = (PlannedExchange.Planned(attributes: serverFields), true)
    }

    mutating func beginClient(_ index: Int) {
        precondition(index == clients.count, "CLIENT spans are described in order")
        open = (PlannedExchange.Planned(attributes: clientFields), false)
    }

    mutating func attribute(_ key: String, _ value: SpanAttribute) {
        open?.span.attributes.append(key, value)
    }

    mutating func urlAttribute(_ key: String, _ url: URLPieces) {
        attribute(key, .string(url.text))
    }

    mutating func attribute(_ key: String, _ value: Substring) {
        attribute(key, .string(String(value)))
    }

    mutating func event(_ event: SpanPlan.Event) {
        open?.span.events.append(event)
    }

    mutating func status(_ status: SpanStatus) {
        open?.span.status = status
    }

    mutating func end(at instant: StoredInstant) {
        guard let (opened, isServer) = open else { return }
        open = nil
        var span = opened
        span.end = instant.instant
        if isServer { server = span } else { clients.append(span) }
    }
}

extension SpanAttributes: SpanAttributeSink {
    mutating func attribute(_ key: String, _ value: SpanAttribute) {
        append(key, value)
    }

    mutating func urlAttribute(_ key: String, _ url: URLPieces) {
        append(key, .string(url.text))
    }

    mutating func attribute(_ key: String, _ value: Substring) {
        append(key, .string(String(value)))
    }
}

extension OTLPSpanWriter {
    /// The spans written, copied.
    var buffer: ByteBuffer { ByteBuffer(bytes: bytes) }
}
