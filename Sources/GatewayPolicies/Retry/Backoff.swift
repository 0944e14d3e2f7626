import GatewayCore

/// Exponential backoff with full jitter, the one formula every retry sleeps by.
///
/// The sleep before retry `n` (n = 0 before the second attempt, 1 before the
/// third, ...) is drawn uniformly from [0, min(max, base·2ⁿ)] — "full jitter"
/// as in Envoy's retry policy and the AWS Architecture Blog's "Exponential
/// Backoff and Jitter" (2015): spreading retries over the whole window
/// de-synchronises clients that failed together, which a fixed or equal-jitter
/// delay does not.
public enum Backoff {
    /// The upper bound of the sleep before retry `n`: min(max, base·2ⁿ), without
    /// overflow for any `n`.
    public static func ceiling(retry n: Int, base: Duration, max: Duration) -> Duration {
        guard base > .zero, max > .zero else { return .zero }
        let exponent = Swift.min(Swift.max(n, 0), 62)
        let factor = Int64(1) << exponent
        let (seconds, attoseconds) = base.components
        // base·2ⁿ overflows long before 2⁶² for any sensible base: compare in Double first.
        if Double(seconds) * Double(factor) > max.seconds + 1 {
            return max
        }
        let scaled = Duration(secondsComponent: seconds, attosecondsComponent: attoseconds) * factor
        return Swift.min(scaled, max)
    }

    /// The sleep before retry `n`: `unit` (uniform in [0, 1)) times the ceiling.
    public static func fullJitter(retry n: Int, base: Duration, max: Duration, unit: Double) -> Duration {
        let ceiling = ceiling(retry: n, base: base, max: max)
        let fraction = Swift.min(Swift.max(unit, 0), 1)
        return ceiling * fraction
    }
}
