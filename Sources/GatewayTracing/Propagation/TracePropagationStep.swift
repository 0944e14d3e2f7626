import GatewayCore
import NIOCore

/// The last attempt step while tracing is on: gives the attempt its CLIENT
/// span's id, and the upstream a `traceparent` whose parent is that span
/// (and the trace's `tracestate`), on the attempt's copy of the request. Last, so
/// that it runs as the attempt is sent, after every wait; every attempt (a
/// retry, a replay after a 401) runs it again and gets a span of its own.
/// An exchange with no trace context (tracing off) is left as it came.
struct TracePropagationStep: AttemptStep {
    func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
        guard let spans = context.record.trace as? ExchangeSpans else { return .proceed }
        spans.startAttempt(headers: &request.headers, record: context.record)
        return .proceed
    }
}
