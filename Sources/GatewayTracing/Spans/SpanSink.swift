import GatewayCore

/// Where a span's attributes are said (``SpanPlan``'s request part).
protocol SpanAttributeSink {
    /// Adds an attribute; each key once.
    mutating func attribute(_ key: String, _ value: SpanAttribute)
    /// Adds a string attribute: a URL, given in pieces.
    mutating func urlAttribute(_ key: String, _ url: URLPieces)
    /// Adds a string attribute given as a piece of a string (no string made of it).
    mutating func attribute(_ key: String, _ value: Substring)
}

/// Where ``SpanPlan/describe(_:into:)`` puts the spans of one finished
/// exchange, in order: the SERVER span, then each CLIENT span, each opened
/// (with what the request said of it), given its attributes, events and
/// status, then ended.
///
/// ``ExchangeSpans`` encodes them for export as they come (its
/// ``OTLPSpanWriter``): nothing is built in between. The tests keep them as
/// values.
protocol SpanSink: SpanAttributeSink {
    /// Opens the exchange's SERVER span.
    mutating func beginServer()
    /// Opens the CLIENT span of the attempt prepared `index`th (from 0).
    mutating func beginClient(_ index: Int)
    mutating func event(_ event: SpanPlan.Event)
    mutating func status(_ status: SpanStatus)
    /// Closes the open span, ended at `instant`.
    mutating func end(at instant: StoredInstant)
}
