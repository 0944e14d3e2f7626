import GatewayPolicies
import Testing

@Suite(.timeLimit(.minutes(1)))
struct BackoffTests {
    @Test func ceilingDoublesUpToTheMaximum() {
        let base = Duration.milliseconds(100)
        let max = Duration.seconds(5)
        let ceilings = (0..<8).map { Backoff.ceiling(retry: $0, base: base, max: max) }
        #expect(ceilings == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600), .milliseconds(3200), .seconds(5), .seconds(5)])
        #expect(Backoff.ceiling(retry: 1000, base: base, max: max) == max)
        #expect(Backoff.ceiling(retry: 63, base: .seconds(1_000_000), max: .seconds(30)) == .seconds(30))
    }

    @Test func fullJitterStaysWithinBoundsAndCoversTheRange() {
        let random = LockedRandomSource(seed: 42)
        let base = Duration.milliseconds(100)
        let max = Duration.seconds(5)
        for retry in 0..<10 {
            let ceiling = Backoff.ceiling(retry: retry, base: base, max: max)
            var low = ceiling
            var high = Duration.zero
            for _ in 0..<2000 {
                let delay = Backoff.fullJitter(retry: retry, base: base, max: max, unit: random.nextUnit())
                #expect(delay >= .zero && delay <= ceiling)
                low = Swift.min(low, delay)
                high = Swift.max(high, delay)
            }
            // Uniform over the whole window: both ends are reached closely.
            #expect(low < ceiling * 0.01)
            #expect(high > ceiling * 0.99)
        }
    }

    @Test func aSeededSourceRepeats() {
        let a = LockedRandomSource(seed: 7)
        let b = LockedRandomSource(seed: 7)
        let first = (0..<5).map { _ in a.nextUnit() }
        #expect(first == (0..<5).map { _ in b.nextUnit() })
        #expect(first.allSatisfy { $0 >= 0 && $0 < 1 })
        #expect(Backoff.fullJitter(retry: 2, base: .milliseconds(100), max: .seconds(5), unit: 0.5) == .milliseconds(200))
    }
}
