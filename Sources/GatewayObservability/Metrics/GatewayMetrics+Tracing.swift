extension GatewayMetrics {
    /// `gateway_trace_spans_dropped_total{reason}` goes up by `count`: spans
    /// the OpenTelemetry exporter dropped. `reason`: `queue_full` or `export_failed`.
    /// Called per exchange while the queue is full (a collector down or slow):
    /// the counter is looked up, not made again, so that costs the request little.
    public func traceSpansDropped(reason: String, count: Int) {
        guard count > 0 else { return }
        spansDropped.get([reason]).increment(by: Int64(count))
    }
}
