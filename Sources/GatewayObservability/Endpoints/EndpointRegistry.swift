import Logging
import NIOConcurrencyHelpers

/// The endpoints seen so far and their recorders, with the bounds that keep
/// label sets finite whatever clients send:
/// - at most `maxEndpoints` automatically named endpoints per configured upstream,
///   and as many for all unconfigured hosts together (the caller passes the
///   configured bound), further ones are `other`; configured templates are
///   bounded by the config and always get their own series;
/// - at most `maxHostUpstreams` unconfigured hosts as `upstream` labels, further
///   ones are `other`; configured upstream names are always themselves.
///
/// A known endpoint costs one dictionary look-up under a lock; a new one makes
/// its handles once (under the lock: no I/O, a few microseconds, at most the
/// bound many times), and a new automatic one of a configured upstream is
/// checked for ids that normalization kept (``IdLikePaths``: warned once per
/// upstream, logged outside the lock).
final class EndpointRegistry: Sendable {
    static let defaultMaxHostUpstreams = 100
    /// The key of the endpoint budget all unconfigured hosts share (not a valid host).
    static let unconfiguredHostsBudget = "<unconfigured hosts>"

    private struct State {
        var recorders: [EndpointKey: EndpointRecorder] = [:]
        var automaticEndpoints: [String: Int] = [:]
        var configuredUpstreams: Set<String> = []
        var hostUpstreams: Set<String> = []
        var idLikePaths = IdLikePaths()
        var logger = Logger(label: "gateway.metrics")
    }

    private let state = NIOLockedValueBox(State())
    private let maxHostUpstreams: Int
    private let makeRecorder: @Sendable (EndpointKey) -> EndpointRecorder

    init(maxHostUpstreams: Int = EndpointRegistry.defaultMaxHostUpstreams, makeRecorder: @escaping @Sendable (EndpointKey) -> EndpointRecorder) {
        self.maxHostUpstreams = maxHostUpstreams
        self.makeRecorder = makeRecorder
    }

    /// Configured upstream names are labels as they are, never `other`.
    func addConfiguredUpstreams(_ names: some Sequence<String>) {
        state.withLockedValue { $0.configuredUpstreams.formUnion(names) }
    }

    /// Where the warning about id-like paths goes (the config's logger, at each load).
    func setLogger(_ logger: Logger) {
        state.withLockedValue { $0.logger = logger }
    }

    /// The bounded `upstream` label for `name` (a configured name or a host).
    func upstreamLabel(_ name: String) -> String {
        state.withLockedValue { Self.admitUpstream(name, in: &$0, max: maxHostUpstreams) }
    }

    /// The recorder for an endpoint; `configured` when the template came from the config.
    func recorder(upstream: String, method: String, endpoint: String, configured: Bool, maxEndpoints: Int) -> EndpointRecorder {
        let key = EndpointKey(upstream: upstream, method: method, endpoint: endpoint)
        let (recorder, warning) = state.withLockedValue { s -> (EndpointRecorder, (IdLikePaths.Warning, Logger)?) in
            if let known = s.recorders[key] { return (known, nil) }
            var admitted = key
            admitted.upstream = Self.admitUpstream(upstream, in: &s, max: maxHostUpstreams)
            if admitted != key, let known = s.recorders[admitted] { return (known, nil) }
            var warning: (IdLikePaths.Warning, Logger)?
            if !configured {
                // Unconfigured hosts share one budget: many hosts times many paths
                // must not multiply the series (and their histograms).
                let budget = s.configuredUpstreams.contains(admitted.upstream) ? admitted.upstream : Self.unconfiguredHostsBudget
                let used = s.automaticEndpoints[budget, default: 0]
                if used >= maxEndpoints {
                    admitted.endpoint = EndpointKey.overflow
                    if let known = s.recorders[admitted] { return (known, nil) }
                } else {
                    s.automaticEndpoints[budget] = used + 1
                    if budget == admitted.upstream, let found = s.idLikePaths.note(upstream: budget, endpoint: admitted.endpoint) {
                        warning = (found, s.logger)
                    }
                }
            }
            let recorder = makeRecorder(admitted)
            s.recorders[admitted] = recorder
            return (recorder, warning)
        }
        if let (found, logger) = warning { Self.log(found, to: logger) }
        return recorder
    }

    private static func log(_ warning: IdLikePaths.Warning, to logger: Logger) {
        logger.warning(
            "paths that look like ids have no endpoint template: each is a metric series of its own; add the template to the upstream's endpoints",
            metadata: [
                "upstream": "\(warning.upstream)", "template": "\(warning.template)",
                "endpoints": "\(warning.count)", "examples": "\(warning.examples.joined(separator: " "))",
                "hint": "endpoints: [\"\(warning.template)\"]",
            ]
        )
    }

    private static func admitUpstream(_ name: String, in s: inout State, max: Int) -> String {
        if s.configuredUpstreams.contains(name) || s.hostUpstreams.contains(name) { return name }
        guard s.hostUpstreams.count < max else { return EndpointKey.overflow }
        s.hostUpstreams.insert(name)
        return name
    }

    /// Every endpoint seen so far.
    var all: [EndpointRecorder] {
        state.withLockedValue { Array($0.recorders.values) }
    }
}
