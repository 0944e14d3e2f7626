@testable import GatewayUpstream
import NIOHTTP1
import Testing

/// The response's declared length, read in one scan without allocating:
/// identical values (as fields or as a list) are one length; disagreeing,
/// malformed or chunked-overridden ones are none.
struct UpstreamContentLengthTests {
    static func length(_ fields: [(String, String)]) -> Int? {
        HTTPResponseHead(version: .http1_1, status: .ok, headers: HTTPHeaders(fields)).upstreamContentLength
    }

    @Test func identicalValuesAreOneLength() {
        #expect(Self.length([("Content-Length", "5")]) == 5)
        #expect(Self.length([("content-length", " 12 ")]) == 12)
        #expect(Self.length([("Content-Length", "5"), ("CONTENT-LENGTH", "5")]) == 5)
        #expect(Self.length([("Content-Length", "5, 5")]) == 5)
        #expect(Self.length([("Content-Length", "0")]) == 0)
    }

    @Test func disagreeingMalformedOrOverriddenLengthsAreNone() {
        #expect(Self.length([]) == nil)
        #expect(Self.length([("Content-Length", "5"), ("Content-Length", "6")]) == nil)
        #expect(Self.length([("Content-Length", "5, 6")]) == nil)
        #expect(Self.length([("Content-Length", "-1")]) == nil)
        #expect(Self.length([("Content-Length", "5x")]) == nil)
        #expect(Self.length([("Content-Length", "")]) == nil)
        #expect(Self.length([("Content-Length", "1234567890123456789")]) == nil)
        #expect(Self.length([("Content-Length", "5"), ("Transfer-Encoding", "chunked")]) == nil)
    }
}
