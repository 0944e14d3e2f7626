import GatewayConfig
import GatewayCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayTracing

/// The trace context through an exchange, with the gateway's tracer: the
/// observer's SERVER span continues the client's trace, each attempt's
/// `traceparent` names that attempt's own CLIENT span, the record carries the
/// ids to the log lines, and the rate limit's and token's waits are timed.
@Suite struct PropagationTests {
    static let valid = TraceParentTests.valid

    func prepare(_ step: any AttemptStep, _ request: inout ProxyRequest, _ context: RequestContext) -> AttemptStepDecision {
        step.prepare(&request, context: context, on: EmbeddedEventLoop())
    }

    @Test func eachAttemptsUpstreamParentIsItsOwnSpanInTheClientsTrace() throws {
        let observer = TracingObserver(tracer: try TracingTestSupport.tracer(), config: GatewayConfig())
        let context = TracingTestSupport.context()
        let routed = TracingTestSupport.request([("traceparent", Self.valid), ("tracestate", "congo=t61rcWkgMzE")])
        let observation = observer.begin(routed, context: context)
        let spans = try #require(observation as? ExchangeSpans)
        #expect(context.record.trace === spans)
        #expect(spans.traceID == TraceParentTests.trace)
        #expect(spans.spanID.count == 16 && spans.spanID != TraceParentTests.parent)
        #expect(spans.isSampled)

        var first = routed
        guard case .proceed = prepare(TracePropagationStep(), &first, context) else {
            Issue.record("the step proceeds")
            return
        }
        let sent = try #require(TraceParent(headers: first.headers), "\(first.headers)")
        #expect(sent.traceID == TraceParentTests.trace)
        #expect(sent.parentID != TraceParentTests.parent && sent.parentID != spans.spanID, "the attempt's own span")
        #expect(sent.sampled)
        #expect(first.headers["tracestate"] == ["congo=t61rcWkgMzE"])

        var second = routed
        _ = prepare(TracePropagationStep(), &second, context)
        let resent = try #require(TraceParent(headers: second.headers))
        #expect(resent.traceID == TraceParentTests.trace && resent.parentID != sent.parentID, "a retry is a span of its own")
        #expect(routed.headers["traceparent"] == [Self.valid], "the routed request keeps the client's field")
        observation.finish(ExchangeOutcome(status: 200, responseBytes: 0, error: nil))
    }

    @Test func aRequestWithoutContextStartsATraceAndPassesItOn() throws {
        let observer = TracingObserver(tracer: try TracingTestSupport.tracer(), config: GatewayConfig())
        let context = TracingTestSupport.context()
        var request = TracingTestSupport.request([("tracestate", "orphan=1")])
        let spans = try #require(observer.begin(request, context: context) as? ExchangeSpans)
        _ = prepare(TracePropagationStep(), &request, context)
        let sent = try #require(TraceParent(headers: request.headers))
        #expect(sent.traceID == spans.traceID && sent.parentID != spans.spanID)
        #expect(request.headers["tracestate"].isEmpty, "a tracestate without its traceparent belongs to no trace")
    }

    /// Attempts edit one request (the exchange's): a request that came with
    /// no trace field gets one `traceparent` per attempt, each replacing the
    /// last, though its fields are not searched before the first.
    @Test func eachAttemptOfOneRequestReplacesTheLastOnesParent() throws {
        let observer = TracingObserver(tracer: try TracingTestSupport.tracer(), config: GatewayConfig())
        let context = TracingTestSupport.context()
        var request = TracingTestSupport.request([("accept", "*/*")])
        #expect(!TraceCarrier.mayBeIn(request.headers))
        let spans = try #require(observer.begin(request, context: context) as? ExchangeSpans)
        _ = prepare(TracePropagationStep(), &request, context)
        let first = try #require(TraceParent(headers: request.headers))
        _ = prepare(TracePropagationStep(), &request, context)
        #expect(request.headers["traceparent"].count == 1)
        let second = try #require(TraceParent(headers: request.headers))
        #expect(second.traceID == spans.traceID && second.parentID != first.parentID)
        #expect(request.headers["accept"] == ["*/*"] && request.headers.count == 2)
        #expect(TraceCarrier.mayBeIn(RequestFields([("TraceState", "a=1")])), "either field, in any case")
    }

    @Test func theLogLinesOfATracedExchangeCarryItsIDs() throws {
        let observer = TracingObserver(tracer: try TracingTestSupport.tracer(), config: GatewayConfig())
        let context = TracingTestSupport.context()
        let spans = try #require(observer.begin(TracingTestSupport.request(), context: context) as? ExchangeSpans)
        var metadata: Logger.Metadata = [:]
        context.addRequestMetadata(to: &metadata)
        #expect(metadata["trace_id"] == .string(spans.traceID))
        #expect(metadata["span_id"] == .string(spans.spanID))
        #expect(context.logger[metadataKey: "trace_id"] == .string(spans.traceID))
    }

    @Test func anExchangeWithoutTraceContextIsLeftAlone() {
        let context = TracingTestSupport.context()
        var request = TracingTestSupport.request([("traceparent", Self.valid)])
        _ = prepare(TracePropagationStep(), &request, context)
        #expect(request.headers["traceparent"] == [Self.valid])
        var metadata: Logger.Metadata = [:]
        context.addRequestMetadata(to: &metadata)
        #expect(metadata.isEmpty)
    }

    /// A step that waits for `future` before every attempt.
    struct WaitingStep: AttemptStep {
        let future: EventLoopFuture<Void>

        func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
            .wait(AttemptWait(future: future, repeatStep: true, cancel: {}))
        }

        func replayLimit(for request: ProxyRequest) -> Int? { 1024 }
    }

    @Test func aWrappedStepsWaitIsTimedAndOtherwiseTheSame() throws {
        let loop = EmbeddedEventLoop()
        let observer = TracingObserver(tracer: try TracingTestSupport.tracer(), config: GatewayConfig())
        let context = TracingTestSupport.context()
        var request = TracingTestSupport.request()
        let spans = try #require(observer.begin(request, context: context) as? ExchangeSpans)
        let promise = loop.makePromise(of: Void.self)
        let step = WaitTimingStep(wrapped: WaitingStep(future: promise.futureResult), kind: .rateLimit)
        #expect(step.replayLimit(for: request) == 1024)

        guard case .wait(let wait) = step.prepare(&request, context: context, on: loop) else {
            Issue.record("the step waits")
            return
        }
        #expect(wait.repeatStep, "the wrapped wait's own")
        let ended = Flag()
        wait.future.whenSuccess { _ in ended.set() }
        #expect(spans.waits.isEmpty)
        promise.succeed(())
        loop.run()
        #expect(ended.isSet)
        #expect(spans.waits.count == 1)
        #expect(spans.waits.first?.kind == .rateLimit)
        #expect(spans.waits.first.map { $0.end >= $0.start } == true)
    }
}

/// A flag set from a future's callback.
final class Flag: Sendable {
    private let box = NIOLockedValueBox(false)
    func set() { box.withLockedValue { $0 = true } }
    var isSet: Bool { box.withLockedValue { $0 } }
}
