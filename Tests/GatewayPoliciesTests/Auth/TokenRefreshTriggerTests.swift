import GatewayPolicies
import Testing

/// The `trigger` of a token fetch says what caused it: tokens are fetched
/// lazily, so the first one comes with the first request needing it (however
/// long after start-up) and is `first_use`, never `startup`.
@Suite(.timeLimit(.minutes(1)))
struct TokenRefreshTriggerTests {
    @Test func theFirstLazyFetchIsLoggedAsFirstUse() async throws {
        let f = try OAuthFixture(expiresIn: 600)
        defer { f.cleanUp() }
        let store = f.makeStore()
        // An hour after the store was made: still no fetch until a request needs a token.
        f.clock.advance(by: .seconds(3600))
        #expect(f.authority.tokenCallCount == 0)
        _ = try await store.accessToken()
        let line = try #require(f.logs.text.split(separator: "\n").first { $0.contains("access token refreshed") }, "\(f.logs.text)")
        #expect(line.contains("trigger=first_use"), "\(line)")
        #expect(!f.logs.text.contains("trigger=startup"), "\(f.logs.text)")

        // Later fetches name their own cause.
        f.clock.advance(by: .seconds(601))
        _ = try await store.accessToken()
        #expect(f.logs.text.split(separator: "\n").filter { $0.contains("access token refreshed") }.last?.contains("trigger=expiry") == true)
        #expect(f.events.refreshes == ["payments/first_use/success", "payments/expiry/success"])
    }
}
