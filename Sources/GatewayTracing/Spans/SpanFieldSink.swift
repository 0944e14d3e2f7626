/// Where a ``SpanPlan`` writes what one span says: its attributes, its events
/// and its status, in that order (all attributes, then the events, then the
/// status if any), as `Span`'s fields come on the wire. The plan is generic
/// over its sink, so each sink gets its own specialized copy of the plan's
/// logic and nothing is built on the way: the export's sink writes protobuf
/// as it is told (``OTLPSpanWriter``), the tests' collects the values.
///
/// Keys and event names are literals: the plan's own, written from their
/// static bytes.
protocol SpanFieldSink {
    /// A string attribute.
    mutating func attribute(_ key: StaticString, string value: String)
    /// A string attribute, a part of another string (`url.path`, `url.query`).
    mutating func attribute(_ key: StaticString, string value: Substring)
    /// A string attribute given as its parts (`url.full`).
    mutating func attribute(_ key: StaticString, url value: UpstreamURL)
    /// An `int64` attribute.
    mutating func attribute(_ key: StaticString, int value: Int64)
    /// A boolean attribute.
    mutating func attribute(_ key: StaticString, bool value: Bool)
    /// An event at `time`: its length as `gateway.duration_ms` (a double,
    /// ``SpanPlan/milliseconds(_:)``), and for a retry's backoff the
    /// `gateway.retry.reason` too (``SpanPlan/durationKey``, ``SpanPlan/retryReasonKey``).
    mutating func event(_ name: StaticString, at time: ContinuousClock.Instant, duration: Duration, retryReason: String?)
    /// The span's status (the last call for the span; none: unset).
    mutating func status(_ status: SpanStatus)
}
