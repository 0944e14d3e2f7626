/// Where ``SpanPlan/describe(_:redactor:into:)`` puts the spans of one
/// finished exchange, in order: the SERVER span, then each CLIENT span, each
/// opened, given its attributes, events and status, then ended.
///
/// ``ExchangeSpans`` encodes them for export as they come (its
/// ``OTLPSpanWriter``): nothing is built in between. ``PlannedSpans`` keeps
/// them as values, for the tests (``SpanPlan``).
protocol SpanSink {
    /// Opens the exchange's SERVER span.
    mutating func beginServer()
    /// Opens the CLIENT span of the attempt prepared `index`th (from 0).
    mutating func beginClient(_ index: Int)
    /// Adds an attribute to the open span; each key once.
    mutating func attribute(_ key: String, _ value: SpanAttribute)
    /// Adds a string attribute `scheme://authority/target`, given in pieces.
    mutating func urlAttribute(_ key: String, scheme: String, authority: String, target: String)
    mutating func event(_ event: SpanPlan.Event)
    mutating func status(_ status: SpanStatus)
    /// Closes the open span, ended at `instant`.
    mutating func end(at instant: ContinuousClock.Instant)
}

/// The spans described, kept as ``SpanPlan/Planned`` values.
struct PlannedSpans: SpanSink {
    var server: SpanPlan.Planned?
    var clients: [SpanPlan.Planned] = []
    /// The span open, and whether it is the SERVER span.
    private var open: (span: SpanPlan.Planned, isServer: Bool)?

    /// The most attributes a SERVER span, a CLIENT span has: room made for
    /// them at once (the keys of each are distinct, appended in order).
    static let serverAttributeCapacity = 16
    static let clientAttributeCapacity = 12

    mutating func beginServer() {
        open = (SpanPlan.Planned(attributes: SpanAttributes(capacity: Self.serverAttributeCapacity)), true)
    }

    mutating func beginClient(_ index: Int) {
        precondition(index == clients.count, "CLIENT spans are described in order")
        open = (SpanPlan.Planned(attributes: SpanAttributes(capacity: Self.clientAttributeCapacity)), false)
    }

    mutating func attribute(_ key: String, _ value: SpanAttribute) {
        open?.span.attributes.append(key, value)
    }

    mutating func urlAttribute(_ key: String, scheme: String, authority: String, target: String) {
        attribute(key, .string(SpanPlan.url(scheme: scheme, authority: authority, target: target)))
    }

    mutating func event(_ event: SpanPlan.Event) {
        open?.span.events.append(event)
    }

    mutating func status(_ status: SpanStatus) {
        open?.span.status = status
    }

    mutating func end(at instant: ContinuousClock.Instant) {
        guard var (span, isServer) = open else { return }
        open = nil
        span.end = instant
        if isServer { server = span } else { clients.append(span) }
    }
}
