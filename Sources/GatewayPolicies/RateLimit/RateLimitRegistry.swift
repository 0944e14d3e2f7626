import GatewayCore
import NIOConcurrencyHelpers
import Synchronization

/// Rate-limit state that outlives a config snapshot (it lives in the app's
/// long-lived services): the local limiters per upstream (or per endpoint),
/// the holds the upstreams asked for (`remaining: 0` until a reset, or
/// `Retry-After`) by `host:port`, and the number of requests waiting per upstream.
///
/// A limiter is kept across reloads while its parameters stay the same; a
/// changed rate, burst, queue or wait makes a new one (waiters of the old one
/// are still served by it). Per-endpoint limiters are bounded: beyond
/// ``maxLimiters``, idle ones (nobody waiting, bucket full) are forgotten, and
/// if none is idle the request shares its upstream's limiter. Looking for idle
/// limiters scans them all, under the lock: it happens at most once per
/// ``sweepInterval``, so a flood of new endpoints costs one scan, not one each.
public final class RateLimitRegistry: Sendable {
    public static let maxLimiters = 4096
    public static let sweepInterval: Duration = .seconds(1)

    struct LimiterKey: Hashable {
        var upstream: String
        var endpoint: String?
    }

    private struct State {
        var limiters: [LimiterKey: RateLimiter] = [:]
        /// Per-endpoint limiters per upstream (``maxEndpoints`` at most each).
        var endpointCounts: [String: Int] = [:]
        var holds: [String: ContinuousClock.Instant] = [:]
        var depths: [String: Int] = [:]
        var lastSweep: ContinuousClock.Instant?
    }

    private let state = NIOLockedValueBox(State())
    /// How many holds the table has, set under the lock with every change: a
    /// request finds there is none (nearly always) without the lock or a lookup.
    private let holdCount = Atomic<Int>(0)
    /// The buckets and holds the gateway replicas share (`shared_state`); nil when alone.
    public let shared: (any SharedRateLimits)?

    public init(shared: (any SharedRateLimits)? = nil) {
        self.shared = shared
    }

    /// The endpoint key the endpoints of an upstream beyond its `maxEndpoints` share, as in the metrics.
    static let overflowEndpoint = "other"

    /// `maxEndpoints`: an upstream's distinct per-endpoint limiters at most
    /// (`metrics.max_endpoints_per_upstream`, the metrics' bound on endpoints);
    /// the endpoints beyond share one (``overflowEndpoint``), and so one shared
    /// bucket row: the rows in the database follow that bound too.
    func limiter(
        upstream: String,
        endpoint: String?,
        maxEndpoints: Int = .max,
        parameters: RateLimiter.Parameters,
        clock: any PolicyClock,
        events: any GatewayEvents
    ) -> RateLimiter {
        let now = clock.now
        let depthChanged: @Sendable (Int) -> Void = { [weak self] delta in
            self?.adjustDepth(upstream: upstream, by: delta, events: events)
        }
        return state.withLockedValue { s in
            var key = LimiterKey(upstream: upstream, endpoint: endpoint)
            if let existing = s.limiters[key], existing.parameters == parameters { return existing }
            if endpoint != nil, s.limiters[key] == nil, s.endpointCounts[upstream, default: 0] >= maxEndpoints {
                key.endpoint = Self.overflowEndpoint
                if let existing = s.limiters[key], existing.parameters == parameters { return existing }
            }
            if s.limiters[key] == nil, s.limiters.count >= Self.maxLimiters {
                if s.lastSweep.map({ now - $0 >= Self.sweepInterval }) ?? true {
                    s.lastSweep = now
                    s.limiters = s.limiters.filter { !$0.value.isIdle(now: now) }
                    s.endpointCounts = [:]
                    for key in s.limiters.keys where key.endpoint != nil { s.endpointCounts[key.upstream, default: 0] += 1 }
                }
                if s.limiters.count >= Self.maxLimiters { key.endpoint = nil }
                if let existing = s.limiters[key], existing.parameters == parameters { return existing }
            }
            let bucket = shared.map { RateLimiter.SharedBucket(backend: $0, key: key.endpoint.map { "\(upstream) \($0)" } ?? upstream) }
            let limiter = RateLimiter(parameters, clock: clock, shared: bucket, depthChanged: depthChanged)
            if key.endpoint != nil, s.limiters[key] == nil { s.endpointCounts[upstream, default: 0] += 1 }
            s.limiters[key] = limiter
            return limiter
        }
    }

    /// Until when `authority` (`host:port`) asked not to be sent requests; nil
    /// if it did not (or that passed). While no upstream asked for a pause
    /// (nearly always), neither the lock is taken nor `authority` made.
    public func hold(authority: @autoclosure () -> String, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard holdCount.load(ordering: .acquiring) > 0 else { return nil }
        let authority = authority()
        return state.withLockedValue { s in
            guard let until = s.holds[authority] else { return nil }
            guard until > now else {
                s.holds[authority] = nil
                holdCount.store(s.holds.count, ordering: .releasing)
                return nil
            }
            return until
        }
    }

    /// Holds requests to `authority` here and, with shared state, in every
    /// replica (the others learn it at their next sync).
    func holdEverywhere(authority: String, for duration: Duration, now: ContinuousClock.Instant) {
        extendHold(authority: authority, until: now + duration, now: now)
        shared?.publishHold(authority: authority, duration: duration)
    }

    /// Holds requests to `authority` (`host:port`) until `until` (a later
    /// existing hold stays). Expired holds are dropped here, so a flood of
    /// hosts does not grow the table.
    public func extendHold(authority: String, until: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        state.withLockedValue { s in
            if let current = s.holds[authority], current >= until { return }
            if s.holds.count >= Self.maxLimiters {
                s.holds = s.holds.filter { $0.value > now }
            }
            s.holds[authority] = until
            holdCount.store(s.holds.count, ordering: .releasing)
        }
    }

    /// Requests of `upstream` waiting now (all its limiters and holds).
    public func queueDepth(upstream: String) -> Int {
        state.withLockedValue { $0.depths[upstream] ?? 0 }
    }

    func adjustDepth(upstream: String, by delta: Int, events: any GatewayEvents) {
        let depth = state.withLockedValue { s -> Int in
            let depth = (s.depths[upstream] ?? 0) + delta
            s.depths[upstream] = depth
            return depth
        }
        events.queueDepth(upstream: upstream, depth: Swift.max(0, depth))
    }
}
