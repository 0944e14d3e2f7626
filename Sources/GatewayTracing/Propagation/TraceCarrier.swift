import NIOHTTP1
import Tracing
import W3CTraceContext

/// The two W3C Trace Context fields of a request, and all the tracer's
/// extractor and injector ever see: never a request's other headers (the
/// tracer logs a carrier it cannot read, and headers hold credentials).
struct TraceCarrier: Sendable, Equatable {
    var traceparent: String?
    var tracestate: String?

    init(traceparent: String? = nil, tracestate: String? = nil) {
        self.traceparent = traceparent
        self.tracestate = tracestate
    }

    /// The trace context a request came with, checked: its one valid
    /// `traceparent` (as version `00`), and its `tracestate` when that is valid
    /// too (an invalid one is dropped, the parent kept, as the specification
    /// says). Nil when the request starts a trace.
    static func incoming(_ headers: HTTPHeaders) -> TraceCarrier? {
        guard let parent = TraceParent(headers: headers) else { return nil }
        let value = parent.headerValue
        guard let state = TraceParent.traceState(in: headers) else { return TraceCarrier(traceparent: value) }
        // The tracer refuses the whole context over a malformed tracestate: checked with the same parser first.
        let valid = (try? TraceContext(traceParentHeaderValue: value, traceStateHeaderValue: state)) != nil
        return TraceCarrier(traceparent: value, tracestate: valid ? state : nil)
    }

    /// Writes the context into `headers` for the next hop: `traceparent`
    /// replaced, `tracestate` replaced or removed (one from the client that
    /// the context does not carry would belong to another trace).
    func write(to headers: inout HTTPHeaders) {
        guard let traceparent else { return }
        headers.replaceOrAdd(name: "traceparent", value: traceparent)
        headers.remove(name: "tracestate")
        if let tracestate { headers.add(name: "tracestate", value: tracestate) }
    }
}

/// Reads a ``TraceCarrier`` for the tracer's `extract`.
struct TraceCarrierExtractor: Extractor {
    func extract(key: String, from carrier: TraceCarrier) -> String? {
        switch key.lowercased() {
        case "traceparent": carrier.traceparent
        case "tracestate": carrier.tracestate
        default: nil
        }
    }
}

/// Fills a ``TraceCarrier`` for the tracer's `inject`.
struct TraceCarrierInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout TraceCarrier) {
        switch key.lowercased() {
        case "traceparent": carrier.traceparent = value
        case "tracestate": carrier.tracestate = value
        default: break
        }
    }
}
