import GatewayConfig
import GatewayCore
import NIOEmbedded
import Testing

@testable import GatewayTracing

/// The sampler decisions (``TraceSampler``), through the observer:
/// a trace the gateway starts is sampled at `sampler_ratio`, one it continues
/// follows its parent's flag (the parent-based samplers), and a trace that is
/// not sampled still passes its context on, flag cleared.
@Suite struct SamplerTests {
    static let sampledParent = TraceParentTests.valid
    static let unsampledParent = "00-\(TraceParentTests.trace)-\(TraceParentTests.parent)-00"

    /// The exchange's spans for a request with `traceparent` (or none), and the flags its attempt sends upstream.
    func decide(_ configure: (inout TracingConfig) -> Void, traceparent: String?) throws -> (sampled: Bool, sent: TraceParent) {
        let observer = TracingObserver(tracer: try TracingTestSupport.tracer(configure), config: GatewayConfig())
        let context = TracingTestSupport.context()
        var request = TracingTestSupport.request(traceparent.map { [("traceparent", $0)] } ?? [])
        let spans = try #require(observer.begin(request, context: context) as? ExchangeSpans, "a context even when not sampled")
        _ = TracePropagationStep().prepare(&request, context: context, on: EmbeddedEventLoop())
        let sent = try #require(TraceParent(headers: request.headers))
        #expect(sent.traceID == spans.traceID)
        if let traceparent { #expect(sent.traceID == TraceParent(parsing: traceparent)?.traceID) }
        return (spans.isSampled, sent)
    }

    @Test func parentBasedRatioZeroSamplesNoNewTraceButFollowsASampledParent() throws {
        let ratioZero: (inout TracingConfig) -> Void = { $0.sampler = .parentBasedTraceIDRatio; $0.samplerRatio = 0 }
        let root = try decide(ratioZero, traceparent: nil)
        #expect(!root.sampled && !root.sent.sampled)
        let child = try decide(ratioZero, traceparent: Self.sampledParent)
        #expect(child.sampled && child.sent.sampled)
    }

    @Test func parentBasedRatioOneSamplesNewTracesButFollowsAnUnsampledParent() throws {
        let root = try decide({ _ in }, traceparent: nil)
        #expect(root.sampled && root.sent.sampled, "the default: parentbased_traceidratio at 1")
        let child = try decide({ _ in }, traceparent: Self.unsampledParent)
        #expect(!child.sampled && !child.sent.sampled)
    }

    @Test func aRatioSamplerIgnoresTheParent() throws {
        let all: (inout TracingConfig) -> Void = { $0.sampler = .traceIDRatio; $0.samplerRatio = 1 }
        #expect(try decide(all, traceparent: Self.unsampledParent).sampled)
        #expect(try decide({ $0.sampler = .alwaysOn }, traceparent: Self.unsampledParent).sampled)
    }

    @Test func alwaysOffSamplesNothingAndStillPropagates() throws {
        let off = try decide({ $0.sampler = .alwaysOff }, traceparent: Self.sampledParent)
        #expect(!off.sampled && !off.sent.sampled)
        #expect(off.sent.parentID != TraceParentTests.parent, "the gateway's span id, though not recorded")
        let parentBasedOff = try decide({ $0.sampler = .parentBasedAlwaysOff }, traceparent: nil)
        #expect(!parentBasedOff.sampled)
        #expect(try decide({ $0.sampler = .parentBasedAlwaysOff }, traceparent: Self.sampledParent).sampled)
    }

    @Test func aRatioSamplesThatShareOfNewTracesFromTheTraceIDAlone() {
        let half = TraceSampler(.traceIDRatio, ratio: 0.5)
        let ids = (0..<4000).map { _ in TraceIDGenerator.traceID() }
        let sampled = ids.filter { half.isSampled(traceID: $0, parent: nil) }.count
        #expect((1700...2300).contains(sampled), "\(sampled) of 4000")
        #expect(ids.allSatisfy { half.isSampled(traceID: $0, parent: nil) == half.isSampled(traceID: $0, parent: nil) })
        #expect(TraceSampler(.traceIDRatio, ratio: 0).isSampled(traceID: TraceID(high: 0, low: 0), parent: nil) == false)
        #expect(TraceSampler(.traceIDRatio, ratio: 1).isSampled(traceID: TraceID(high: 0, low: UInt64.max), parent: nil))
    }

    @Test func idsAreNeverZeroAndDoNotRepeat() {
        let spans = (0..<10000).map { _ in TraceIDGenerator.spanID().value }
        #expect(!spans.contains(0))
        #expect(Set(spans).count == spans.count)
        let trace = TraceIDGenerator.traceID()
        #expect(TraceID(hex: trace.hex) == trace && trace.hex.count == 32)
        #expect(SpanID(hex: "00f067aa0ba902b7")?.hex == "00f067aa0ba902b7")
    }
}
