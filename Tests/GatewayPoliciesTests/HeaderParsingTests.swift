import GatewayPolicies
import NIOHTTP1
import Testing

@Suite(.timeLimit(.minutes(1)))
struct HeaderParsingTests {
    // 784111777 = Sun, 06 Nov 1994 08:49:37 GMT
    let now = 784_111_777.0

    @Test func retryAfterDeltaSeconds() {
        #expect(RetryAfter.parse("120", secondsSince1970: now) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", secondsSince1970: now) == .zero)
        #expect(RetryAfter.parse("99999999999999", secondsSince1970: now)! >= .seconds(86_400))
        #expect(RetryAfter.parse("-5", secondsSince1970: now) == nil)
        #expect(RetryAfter.parse("soon", secondsSince1970: now) == nil)
        #expect(RetryAfter.parse("", secondsSince1970: now) == nil)
    }

    @Test func retryAfterHTTPDateInAllThreeForms() {
        let later = now - 30  // the date is 30 s ahead of "now"
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", secondsSince1970: later) == .seconds(30))
        #expect(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", secondsSince1970: later) == .seconds(30))
        #expect(RetryAfter.parse("Sun Nov  6 08:49:37 1994", secondsSince1970: later) == .seconds(30))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", secondsSince1970: later + 0.25) == .milliseconds(29_750))
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:28:00 GMT", secondsSince1970: 1_445_412_470) == .seconds(10))
        #expect(RetryAfter.parse("Sun, 32 Nov 1994 08:49:37 GMT", secondsSince1970: now) == nil)
        #expect(RetryAfter.parse("Sun, 06 Foo 1994 08:49:37 GMT", secondsSince1970: now) == nil)
    }

    @Test func retryAfterInThePastMeansNow() {
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", secondsSince1970: now + 3600) == .zero)
    }

    @Test func retryAfterHeaderValueRoundsUp() {
        #expect(RetryAfter.headerValue(for: .milliseconds(1)) == "1")
        #expect(RetryAfter.headerValue(for: .zero) == "1")
        #expect(RetryAfter.headerValue(for: .milliseconds(2001)) == "3")
        #expect(RetryAfter.headerValue(for: .seconds(5)) == "5")
    }

    @Test func ietfRateLimitDictionary() {
        let signal = UpstreamRateLimitSignal.parse(["RateLimit": "limit=100, remaining=0, reset=30"], secondsSince1970: now)
        #expect(signal == UpstreamRateLimitSignal(family: .rateLimit, limit: 100, remaining: 0, reset: .seconds(30)))
        #expect(signal?.hold == .seconds(30))
    }

    @Test func ietfRateLimitItemsWithPolicy() {
        let headers: HTTPHeaders = ["RateLimit": "\"hour\";r=40;t=1800, \"second\";r=0;t=1", "RateLimit-Policy": "\"hour\";q=1000;w=3600, \"second\";q=10;w=1"]
        let signal = UpstreamRateLimitSignal.parse(headers, secondsSince1970: now)
        #expect(signal == UpstreamRateLimitSignal(family: .rateLimit, limit: 10, remaining: 0, reset: .seconds(1)))
    }

    @Test func ietfRateLimitFields() {
        let headers: HTTPHeaders = ["RateLimit-Limit": "100, 100;w=60", "RateLimit-Remaining": "0", "RateLimit-Reset": "7"]
        let signal = UpstreamRateLimitSignal.parse(headers, secondsSince1970: now)
        #expect(signal == UpstreamRateLimitSignal(family: .rateLimitFields, limit: 100, remaining: 0, reset: .seconds(7)))
    }

    @Test func xRateLimitWithDeltaAndEpochResets() {
        let delta = UpstreamRateLimitSignal.parse(["X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "12"], secondsSince1970: now)
        #expect(delta == UpstreamRateLimitSignal(family: .xRateLimit, limit: 60, remaining: 0, reset: .seconds(12)))
        let epoch = UpstreamRateLimitSignal.parse(["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700000042"], secondsSince1970: 1_700_000_000)
        #expect(epoch?.hold == .seconds(42))
        let millis = UpstreamRateLimitSignal.parse(["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700000005000"], secondsSince1970: 1_700_000_000)
        #expect(millis?.hold == .seconds(5))
        let pastEpoch = UpstreamRateLimitSignal.parse(["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1600000000"], secondsSince1970: 1_700_000_000)
        #expect(pastEpoch?.hold == nil)
    }

    @Test func remainingRequestsMeanNoHold() {
        let signal = UpstreamRateLimitSignal.parse(["X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "12"], secondsSince1970: now)
        #expect(signal?.remaining == 3)
        #expect(signal?.hold == nil)
        #expect(UpstreamRateLimitSignal.parse(["Content-Type": "text/plain"], secondsSince1970: now) == nil)
    }

    @Test func theStructuredHeaderWinsOverTheOthers() {
        let headers: HTTPHeaders = ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "100", "RateLimit": "limit=5, remaining=2, reset=1"]
        #expect(UpstreamRateLimitSignal.parse(headers, secondsSince1970: now)?.family == .rateLimit)
    }
}
