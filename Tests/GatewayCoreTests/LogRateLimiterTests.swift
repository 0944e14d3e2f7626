import GatewayCore
import NIOCore
import Testing

/// One line per interval for a repeating condition, and the next line says how many were not logged.
struct LogRateLimiterTests {
    @Test func logsTheFirstThenCountsUntilTheIntervalPasses() {
        var limiter = LogRateLimiter(interval: .seconds(10))
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        #expect(limiter.admit(now: start) == 0)
        #expect(limiter.admit(now: start + .seconds(1)) == nil)
        #expect(limiter.admit(now: start + .seconds(9)) == nil)
        #expect(limiter.admit(now: start + .seconds(10)) == 2)
        #expect(limiter.admit(now: start + .seconds(25)) == 0)
        #expect(LogRateLimiter.more(2) == " (and 2 more since the last such line)")
        #expect(LogRateLimiter.more(0).isEmpty)
    }
}
