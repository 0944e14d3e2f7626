import GatewayCore
@testable import GatewayPolicies
import NIOCore
import Testing

/// The rate-limit step looks at a response's fields only when one is named
/// `RateLimit`, `RateLimit-*` or `X-RateLimit-*` (or the status is 429 or 503),
/// and finds such a name in the upstream's lines without making strings.
@Suite struct RateLimitNameTests {
    static func has(_ name: String) -> Bool {
        Array(name.utf8).withUnsafeBytes { RateLimitStep.isRateLimitName($0) }
    }

    @Test func rateLimitNamesInAnyCase() {
        #expect(Self.has("RateLimit"))
        #expect(Self.has("ratelimit-remaining"))
        #expect(Self.has("X-RateLimit-Reset"))
        #expect(Self.has("x-ratelimit-limit"))
        #expect(!Self.has("X-Rate"))
        #expect(!Self.has("Retry-After"))
        #expect(!Self.has("X-Other-RateLimit"))
    }

    @Test func foundInTheUpstreamsLines() {
        let lines = ByteBuffer(string: "Server: origin\r\nX-RateLimit-Remaining: 0\r\n")
        #expect(ResponseFields(lines: lines, dropped: 0).containsName(where: RateLimitStep.isRateLimitName))
        #expect(!ResponseFields(lines: lines, dropped: 0b10).containsName(where: RateLimitStep.isRateLimitName))
    }
}
