extension GatewayMetrics {
    /// `gateway_trace_spans_dropped_total{reason}` goes up by `count`: spans
    /// the OpenTelemetry exporter dropped. `reason`: `queue_full` or `export_failed`.
    public func traceSpansDropped(reason: String, count: Int) {
        guard count > 0 else { return }
        factory.counter(.traceSpansDropped, [reason]).increment(by: Int64(count))
    }
}
