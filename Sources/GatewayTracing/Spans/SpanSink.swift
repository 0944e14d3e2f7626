/// Where a span's attributes are said (``SpanPlan``'s request part).
protocol SpanAttributeSink {
    /// Adds an attribute; each key once.
    mutating func attribute(_ key: String, _ value: SpanAttribute)
    /// Adds a string attribute `scheme://authority/target`, given in pieces.
    mutating func urlAttribute(_ key: String, scheme: String, authority: String, target: String)
}

/// Where ``SpanPlan/describe(_:into:)`` puts the spans of one finished
/// exchange, in order: the SERVER span, then each CLIENT span, each opened
/// (with what the request said of it), given its attributes, events and
/// status, then ended.
///
/// ``ExchangeSpans`` encodes them for export as they come (its
/// ``OTLPSpanWriter``): nothing is built in between. ``PlannedSpans`` keeps
/// them as values, for the tests (``SpanPlan``).
protocol SpanSink: SpanAttributeSink {
    /// Opens the exchange's SERVER span.
    mutating func beginServer()
    /// Opens the CLIENT span of the attempt prepared `index`th (from 0).
    mutating func beginClient(_ index: Int)
    mutating func event(_ event: SpanPlan.Event)
    mutating func status(_ status: SpanStatus)
    /// Closes the open span, ended at `instant`.
    mutating func end(at instant: ContinuousClock.Instant)
}

extension SpanAttributes: SpanAttributeSink {
    mutating func attribute(_ key: String, _ value: SpanAttribute) {
        append(key, value)
    }

    mutating func urlAttribute(_ key: String, scheme: String, authority: String, target: String) {
        append(key, .string(SpanPlan.url(scheme: scheme, authority: authority, target: target)))
    }
}

/// The spans described, kept as ``SpanPlan/Planned`` values.
struct PlannedSpans: SpanSink {
    var server: SpanPlan.Planned?
    var clients: [SpanPlan.Planned] = []
    /// What the request said of the SERVER span, and of every CLIENT span: each opens with it.
    let serverFields: SpanAttributes
    let clientFields: SpanAttributes
    /// The span open, and whether it is the SERVER span.
    private var open: (span: SpanPlan.Planned, isServer: Bool)?

    /// The most attributes a SERVER span, a CLIENT span has: room made for
    /// them at once (the keys of each are distinct, appended in order).
    static let serverAttributeCapacity = 16
    static let clientAttributeCapacity = 12

    init(serverFields: SpanAttributes = [:], clientFields: SpanAttributes = [:]) {
        self.serverFields = serverFields
        self.clientFields = clientFields
    }

    mutating func beginServer() {
        var attributes = SpanAttributes(capacity: Self.serverAttributeCapacity)
        attributes.merge(serverFields)
        open = (SpanPlan.Planned(attributes: attributes), true)
    }

    mutating func beginClient(_ index: Int) {
        precondition(index == clients.count, "CLIENT spans are described in order")
        var attributes = SpanAttributes(capacity: Self.clientAttributeCapacity)
        attributes.merge(clientFields)
        open = (SpanPlan.Planned(attributes: attributes), false)
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
