/// A span as it is exported: plain values, built once when its exchange
/// finishes (``ExchangeSpans``, from the ``SpanPlan``) and queued for the
/// collector (``SpanExportQueue``). Nothing of it exists before: while an
/// exchange runs it has only ids.
struct FinishedSpan: Sendable {
    /// `Span.SpanKind`: the gateway makes these two.
    enum Kind: Sendable, Equatable {
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

    /// A point in the span's time line.
    struct Event: Sendable, Equatable {
        var name: String
        /// Nanoseconds since 1970.
        var time: UInt64
        var attributes: SpanAttributes
    }

    var name: String
    var kind: Kind
    var traceID: TraceID
    var spanID: SpanID
    /// The parent span; nil for a root span.
    var parentID: SpanID?
    /// The trace's `tracestate`, as the client sent it (empty: none).
    var traceState: String
    /// Nanoseconds since 1970.
    var start: UInt64
    /// Nanoseconds since 1970.
    var end: UInt64
    var attributes: SpanAttributes
    var events: [Event]
    /// Nil: unset.
    var status: SpanStatus?
}
