import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// A request with a body that the upstream answers 401, through the running
/// gateway: replayed with the new token, its body sent again byte for byte,
/// when it may be sent twice (`Idempotency-Key`); passed back once otherwise.
@Suite(.timeLimit(.minutes(2)))
struct OAuthBodyReplayTests {
    static func posts(_ f: OAuthTests.Fixture) -> [RecordedRequest] {
        f.protected.receivedRequests.filter { $0.method == "POST" }
    }

    /// With `Content-Length`, and chunked (replayed with the length of its copy).
    @Test(arguments: [false, true])
    func aPostWithIdempotencyKeyIsReplayedWithItsBodyAndTheNewToken(chunked: Bool) async throws {
        let f = try await OAuthTests.Fixture.start()
        let gateway = try await GatewayHarness.start { f.configure(&$0) }
        defer { Task { try? await gateway.stop(); await f.shutdown() } }
        let warm = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.payments.test/custom/warm"])
        #expect(warm.stdoutString == "200", "\(gateway.logs.text)")
        f.authority.revokeAccessTokens()

        let body = "amount=42&order=7"
        let framing = chunked ? ["-H", "Transfer-Encoding: chunked"] : []
        let result = try await gateway.curl(
            ["-o", "/dev/null", "-w", "%{http_code}", "-H", "Idempotency-Key: pay-7", "--data-binary", body] + framing
                + ["http://api.payments.test/custom/charge"]
        )
        #expect(result.stdoutString == "200", "\(result.stderrString) \(gateway.logs.text)")
        let sent = Self.posts(f)
        #expect(sent.count == 2, "the 401 and the replay")
        #expect(sent.map { String(decoding: $0.body, as: UTF8.self) } == [body, body], "the same body twice")
        let tokens = sent.map { $0.header("Authorization") }
        #expect(tokens.last == "Bearer \(f.authority.issuedAccessTokens.last ?? "")")
        #expect(tokens.first != tokens.last, "replayed with the new token")
        #expect(f.authority.tokenCallCount == 2, "startup + one refresh")
    }

    @Test func aPostWithoutIdempotencyKeyGetsThe401AndIsSentOnce() async throws {
        let f = try await OAuthTests.Fixture.start()
        let gateway = try await GatewayHarness.start { f.configure(&$0) }
        defer { Task { try? await gateway.stop(); await f.shutdown() } }
        let warm = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.payments.test/custom/warm"])
        #expect(warm.stdoutString == "200")
        f.authority.revokeAccessTokens()

        let result = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "--data-binary", "amount=1", "http://api.payments.test/custom/charge"])
        #expect(result.stdoutString == "401")
        #expect(Self.posts(f).count == 1, "a POST without Idempotency-Key is never sent twice")
        // The token is still replaced (in the background), for the client's next request.
        let refreshed = #"gateway_token_refreshes_total{upstream="payments",trigger="401",result="success"} 1"#
        var replaced = false
        for _ in 0..<200 where !replaced {
            replaced = try await OAuthTests.metrics(gateway).contains(refreshed)
            if !replaced { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(replaced, "the new token is in use")
        let next = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "--data-binary", "amount=1", "http://api.payments.test/custom/charge"])
        #expect(next.stdoutString == "200")
    }
}
