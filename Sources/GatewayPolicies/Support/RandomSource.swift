import NIOConcurrencyHelpers

/// Uniform random numbers for backoff jitter, injectable so tests are repeatable.
public protocol RandomSource: Sendable {
    /// A value uniformly distributed in [0, 1).
    func nextUnit() -> Double
}

/// The system's cryptographically secure generator.
public struct SystemRandomSource: RandomSource {
    public init() {}

    public func nextUnit() -> Double {
        Double.random(in: 0..<1)
    }
}

/// Any `RandomNumberGenerator` (e.g. a seeded ``SplitMix64``) behind a lock.
public final class LockedRandomSource<Generator: RandomNumberGenerator & Sendable>: RandomSource, Sendable {
    private let generator: NIOLockedValueBox<Generator>

    public init(_ generator: Generator) {
        self.generator = NIOLockedValueBox(generator)
    }

    public func nextUnit() -> Double {
        generator.withLockedValue { Double.random(in: 0..<1, using: &$0) }
    }
}

extension LockedRandomSource where Generator == SplitMix64 {
    /// A repeatable source: the same seed gives the same sequence.
    public convenience init(seed: UInt64) {
        self.init(SplitMix64(seed: seed))
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, seedable generator.
/// Not for cryptography; good enough for jitter and tests.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
