import GatewayCore
import GatewayPolicies
import Testing

/// `expires_in: 0` from a token endpoint must not make every
/// request call it: a floor of 30 s, logged once.
@Suite(.timeLimit(.minutes(1)))
struct TokenLifetimeFloorTests {
    @Test func expiresInZeroIsTreatedAsThirtySecondsAndLoggedOnce() async throws {
        let f = try OAuthFixture(expiresIn: 0)
        defer { f.cleanUp() }
        let store = f.makeStore()
        let first = try await store.accessToken()
        #expect(try await store.accessToken() == first)
        f.clock.advance(by: .seconds(10))
        #expect(try await store.accessToken() == first, "not a token call per request")
        #expect(f.authority.tokenCallCount == 1)
        // Refreshed ahead of the floored expiry (half its lifetime before it).
        f.clock.advance(by: .seconds(10))
        #expect(try await store.accessToken() != first)
        #expect(f.authority.tokenCallCount == 2)
        let warnings = f.logs.text.components(separatedBy: "very short expires_in").count - 1
        #expect(warnings == 1)
        #expect(TokenStore.minimumTokenLifetime == 30)
    }
}
