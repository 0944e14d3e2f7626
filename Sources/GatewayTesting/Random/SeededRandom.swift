import Foundation
import GatewayPolicies

/// Fixed-seed randomness for tests: the same sequence on every run (the
/// gateway's own ``SplitMix64``), and the distributions tests draw samples from.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var generator: SplitMix64

    public init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
    }

    public mutating func next() -> UInt64 {
        generator.next()
    }

    /// A log-normal sample around `median` (Box-Muller).
    public mutating func logNormal(median: Double, sigma: Double) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return median * exp(sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2))
    }
}
