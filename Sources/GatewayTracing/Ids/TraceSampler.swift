import GatewayConfig

/// Whether an exchange's spans are recorded and exported, as `tracing.sampler`
/// says (the OpenTelemetry SDKs' samplers of the same names). A trace that is
/// not sampled still passes its context upstream, its flag cleared.
///
/// - `always_on`, `always_off`: every trace, none.
/// - `traceidratio`: `sampler_ratio` of traces, decided from the trace id
///   alone (its low 63 bits below the ratio's share of them), so every
///   service sampling at the same ratio agrees on a trace.
/// - `parentbased_*`: the parent's `sampled` flag when the request has a
///   `traceparent`; otherwise the named sampler decides for the new trace.
struct TraceSampler: Sendable, Equatable {
    /// The decision for a trace without parent.
    private enum Root: Sendable, Equatable {
        case always
        case never
        /// Trace ids whose low 63 bits are below this are sampled.
        case below(UInt64)
    }

    private let root: Root
    private let followsParent: Bool

    init(_ sampler: TracingConfig.Sampler, ratio: Double) {
        switch sampler {
        case .alwaysOn: root = .always
        case .alwaysOff, .parentBasedAlwaysOff: root = .never
        case .traceIDRatio, .parentBasedTraceIDRatio: root = Self.share(ratio)
        case .parentBasedAlwaysOn: root = .always
        }
        followsParent = sampler == .parentBasedAlwaysOn || sampler == .parentBasedAlwaysOff || sampler == .parentBasedTraceIDRatio
    }

    /// `ratio` of trace ids.
    private static func share(_ ratio: Double) -> Root {
        if ratio >= 1 { return .always }
        if ratio <= 0 || ratio.isNaN { return .never }
        return .below(UInt64(ratio * 9_223_372_036_854_775_808.0))
    }

    init(config: TracingConfig) {
        self.init(config.sampler, ratio: config.samplerRatio)
    }

    /// Whether the trace `traceID` is sampled here, continuing `parent` (the
    /// request's `traceparent`) or starting a trace (nil).
    func isSampled(traceID: TraceID, parent: TraceParent?) -> Bool {
        if followsParent, let parent { return parent.sampled }
        switch root {
        case .always: return true
        case .never: return false
        case .below(let bound): return traceID.low & (UInt64.max >> 1) < bound
        }
    }
}
