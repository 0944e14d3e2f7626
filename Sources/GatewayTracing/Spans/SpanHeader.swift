/// `Span.SpanKind`: the gateway makes these two.
enum SpanKind: Sendable, Equatable {
    /// The gateway's span of an exchange.
    case server
    /// One upstream attempt.
    case client

    /// `SPAN_KIND_SERVER` 2, `SPAN_KIND_CLIENT` 3.
    var protobufValue: UInt64 {
        switch self {
        case .server: 2
        case .client: 3
        }
    }
}

/// What a span is before what it says: its place in the trace, its name and
/// kind, when it ran. ``ExchangeSpans`` knows it when the exchange finishes,
/// the ``SpanPlan`` gives the rest (attributes, events, status); the writer
/// (``OTLPSpanWriter``) puts it first, as `Span`'s fields 1 to 8.
struct SpanHeader: Sendable {
    var kind: SpanKind
    var traceID: TraceID
    var spanID: SpanID
    /// The parent span; nil for a root span.
    var parentID: SpanID?
    /// The trace's `tracestate`, as the client sent it (nil or empty: none).
    var traceState: String?
    var name: SpanName
    /// Nanoseconds since 1970.
    var start: UInt64
    /// Nanoseconds since 1970.
    var end: UInt64
}
