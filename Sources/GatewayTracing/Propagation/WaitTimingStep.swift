import GatewayCore
import NIOCore

/// A step whose waits the exchange's span shows (while tracing is on): the
/// rate limit's queue or pause, the OAuth2 token's refresh (before an attempt,
/// or after a 401, as its replay). Everything else is the wrapped step's; a
/// step that proceeds costs one call more, and nothing is read.
struct WaitTimingStep: AttemptStep {
    let wrapped: any AttemptStep
    let kind: TracedWait

    func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
        let decision = wrapped.prepare(&request, context: context, on: eventLoop)
        guard case .wait(let wait) = decision, let spans = context.record.trace as? ExchangeSpans else { return decision }
        return .wait(spans.timing(wait, as: kind))
    }

    func responseHead(
        _ head: UpstreamResponseHead, of request: ProxyRequest, context: RequestContext, mayReplay: Bool, on eventLoop: any EventLoop
    ) -> AttemptResponseVerdict {
        let verdict = wrapped.responseHead(head, of: request, context: context, mayReplay: mayReplay, on: eventLoop)
        guard case .replay(let wait) = verdict, let spans = context.record.trace as? ExchangeSpans else { return verdict }
        return .replay(spans.timing(wait, as: kind))
    }

    func replayLimit(for request: ProxyRequest) -> Int? {
        wrapped.replayLimit(for: request)
    }
}
