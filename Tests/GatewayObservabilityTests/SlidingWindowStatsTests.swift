import GatewayCore
import NIOConcurrencyHelpers
import Testing
@testable import GatewayObservability

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let instant: NIOLockedValueBox<ContinuousClock.Instant>
    init(_ start: ContinuousClock.Instant = .now) { instant = NIOLockedValueBox(start) }
    var now: ContinuousClock.Instant { instant.withLockedValue { $0 } }
    func advance(by duration: Duration) { instant.withLockedValue { $0 = $0 + duration } }
}

@Suite(.timeLimit(.minutes(1)))
struct SlidingWindowStatsTests {
    @Test func percentilesOfAUniformDistribution() {
        let clock = ManualClock()
        var stats = SlidingWindowStats(window: .seconds(300), origin: clock.now)
        for ms in (1...1000).shuffled() {
            stats.record(latency: .milliseconds(ms), failed: ms % 100 == 0, retries: ms % 250 == 0 ? 1 : 0, at: clock.now)
        }
        let snapshot = stats.snapshot(at: clock.now)
        #expect(snapshot.count == 1000)
        #expect(snapshot.failures == 10)
        #expect(snapshot.retries == 4)
        // HdrHistogram with two significant digits: within 1 %.
        #expect(abs(Double(snapshot.p50Micros) - 500_000) <= 5_000, "\(snapshot.p50Micros)")
        #expect(abs(Double(snapshot.p95Micros) - 950_000) <= 9_500, "\(snapshot.p95Micros)")
        #expect(abs(Double(snapshot.p99Micros) - 990_000) <= 9_900, "\(snapshot.p99Micros)")
        #expect(snapshot.maxMicros == 1_000_000, "the maximum is exact")
    }

    @Test func percentilesMergeAcrossSlices() {
        let clock = ManualClock()
        var stats = SlidingWindowStats(window: .seconds(100), sliceCount: 10, origin: clock.now)
        // 1…1000 ms spread over ten slices of ten seconds each.
        for ms in 1...1000 {
            stats.record(latency: .milliseconds(ms), failed: false, retries: 0, at: clock.now)
            if ms % 100 == 0 { clock.advance(by: .seconds(10)) }
        }
        clock.advance(by: .seconds(-1))  // still inside the tenth slice
        let snapshot = stats.snapshot(at: clock.now)
        #expect(snapshot.count == 1000)
        #expect(snapshot.slices.count == 10)
        #expect(abs(Double(snapshot.p50Micros) - 500_000) <= 5_000)
        #expect(abs(Double(snapshot.p99Micros) - 990_000) <= 9_900)
    }

    @Test func oldSlicesExpire() {
        let clock = ManualClock()
        var stats = SlidingWindowStats(window: .seconds(300), sliceCount: 10, origin: clock.now)
        stats.record(latency: .milliseconds(900), failed: true, retries: 2, at: clock.now)
        clock.advance(by: .seconds(200))
        stats.record(latency: .milliseconds(10), failed: false, retries: 0, at: clock.now)
        var snapshot = stats.snapshot(at: clock.now)
        #expect(snapshot.count == 2)
        #expect(snapshot.maxMicros == 900_000)

        // 301 s after the first request its slice has left the window.
        clock.advance(by: .seconds(101))
        snapshot = stats.snapshot(at: clock.now)
        #expect(snapshot.count == 1)
        #expect(snapshot.failures == 0)
        #expect(snapshot.retries == 0)
        #expect(snapshot.maxMicros == 10_000)
        #expect(snapshot.p99Micros <= 10_100)

        // And after a whole window of silence nothing is left.
        clock.advance(by: .seconds(300))
        #expect(stats.snapshot(at: clock.now).count == 0)

        // A slice reused after wrapping around the ring starts empty.
        stats.record(latency: .milliseconds(5), failed: false, retries: 0, at: clock.now)
        snapshot = stats.snapshot(at: clock.now)
        #expect(snapshot.count == 1)
        #expect(snapshot.maxMicros == 5_000)
    }

    @Test func rateUsesTheCoveredTime() {
        let clock = ManualClock()
        var stats = SlidingWindowStats(window: .seconds(300), sliceCount: 10, origin: clock.now)
        clock.advance(by: .seconds(10))
        for _ in 0..<50 { stats.record(latency: .milliseconds(1), failed: false, retries: 0, at: clock.now) }
        #expect(stats.covered(at: clock.now) == .seconds(10), "ten seconds since start")
        clock.advance(by: .seconds(1000))
        #expect(stats.covered(at: clock.now) == .seconds(270 + 20), "nine full slices and 20 s of the current one")
    }

    @Test func reportThroughGatewayMetrics() throws {
        let clock = ManualClock()
        let metrics = GatewayMetrics(statsWindow: .seconds(60), now: { clock.now })
        let recorder = metrics.endpoint(upstream: "api", method: "GET", endpoint: "/users/{id}", configured: false, maxEndpoints: 200)
        for ms in 1...1000 {
            recorder.record(CompletedExchange(duration: .milliseconds(ms), statusClass: ms <= 50 ? .serverError : .success, attempts: []), at: clock.now)
        }
        clock.advance(by: .seconds(20))
        let report = metrics.statsReport()
        let entry = try #require(report.endpoints.first)
        #expect(report.windowSeconds == 60)
        #expect(report.sliceSeconds == 6)
        #expect(entry.count == 1000)
        #expect(entry.errorPct == 5)
        #expect(abs(entry.p50Ms - 500) <= 5)
        #expect(abs(entry.p95Ms - 950) <= 9.5)
        #expect(abs(entry.p99Ms - 990) <= 9.9)
        #expect(entry.maxMs == 1000)
        #expect(entry.rps == 50, "1000 requests in 20 s")
        #expect(entry.slices.count == 1)
        #expect(entry.slices[0].ageSeconds == 18)

        let decoded = try StatsReport.decode(report.json())
        #expect(decoded == report)
        let json = String(decoding: report.json(), as: UTF8.self)
        #expect(json.contains("\"p95_ms\":"))
        #expect(json.contains("\"error_pct\":5"))
    }
}
