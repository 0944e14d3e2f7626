/// The bucket bounds (seconds) of the gateway's histograms
/// (`gateway_request_duration_seconds`, `gateway_upstream_phase_seconds`).
///
/// `histogram_quantile` interpolates linearly inside the bucket that holds
/// the quantile's rank, and the exact quantile lies in that same bucket, so
/// the estimate is off by at most upper ÷ lower − 1 of that bucket. From 50 ms
/// to 5 s no two adjacent bounds are more than 1.099 apart: a p95 (or any
/// quantile) there is within 10% of the exact one, whatever the distribution.
/// With the old bounds (…, 0.5, 1, 2.5, …) it could be off by 150%: an exact
/// p95 of 614 ms read 0.92 s.
///
/// The bounds are the fewest with at most 3 significant digits that keep that
/// ratio and every old bound (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5), so queries and
/// alerts on `le="0.5"` keep working; the 0.5–5 s decade repeats the
/// 0.05–0.5 s one ×10. Below 50 ms and above 5 s the old coarse bounds stay.
/// 62 bounds + `+Inf` (the old set had 14): 63 buckets, 65 lines a series.
enum LatencyBuckets {
    static let bounds: [Double] = [
        0.001, 0.0025, 0.005, 0.01, 0.025,
        0.05, 0.054, 0.059, 0.064, 0.07, 0.076, 0.083, 0.091,
        0.1, 0.109, 0.119, 0.13, 0.14, 0.153, 0.167, 0.183, 0.2, 0.21, 0.23,
        0.25, 0.274, 0.3, 0.32, 0.35, 0.383, 0.42, 0.46,
        0.5, 0.54, 0.59, 0.64, 0.7, 0.76, 0.83, 0.91,
        1, 1.09, 1.19, 1.3, 1.4, 1.53, 1.67, 1.83, 2, 2.1, 2.3,
        2.5, 2.74, 3, 3.2, 3.5, 3.83, 4.2, 4.6,
        5, 10, 30,
    ]

    /// The `le` label of each bucket, `+Inf` last (as swift-prometheus spelled them: `1.0`, `0.0025`).
    static let labels: [[UInt8]] = bounds.map { Array($0.description.utf8) } + [Array("+Inf".utf8)]

    /// The bucket of `value`: the first bound at or above it (`le` is inclusive),
    /// `bounds.count` (`+Inf`) above them all. A binary search.
    @inline(__always)
    static func index(of value: Double) -> Int {
        var low = 0
        var high = bounds.count
        while low < high {
            let middle = (low + high) / 2
            if bounds[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
