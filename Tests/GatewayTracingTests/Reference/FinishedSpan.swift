@testable import GatewayTracing

/// A span as plain values, as the gateway once built them before encoding
/// (test-only now): the input of the reference encoder
/// (``ReferenceSpanEncoder``), which the writer's bytes are compared with.
struct FinishedSpan: Sendable {
    /// A point in the span's time line.
    struct Event: Sendable, Equatable {
        var name: String
        /// Nanoseconds since 1970.
        var time: UInt64
        var attributes: SpanAttributes
    }

    var name: String
    var kind: SpanKind
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
