/// `metrics`: bounds of the per-endpoint metrics.
public struct MetricsConfig: Sendable, Equatable {
    /// `max_endpoints_per_upstream`: distinct endpoints (method + path
    /// template) tracked per upstream; further ones are counted as `other`.
    /// 1...10000.
    public var maxEndpointsPerUpstream: Int
    /// `stats_window`: the sliding window of the exact percentiles in `/stats`.
    public var statsWindow: Duration

    public static let defaultMaxEndpointsPerUpstream = 200
    public static let maxEndpointsLimit = 10_000
    public static let defaultStatsWindow: Duration = .seconds(300)

    public init(
        maxEndpointsPerUpstream: Int = MetricsConfig.defaultMaxEndpointsPerUpstream,
        statsWindow: Duration = MetricsConfig.defaultStatsWindow
    ) {
        self.maxEndpointsPerUpstream = maxEndpointsPerUpstream
        self.statsWindow = statsWindow
    }
}
