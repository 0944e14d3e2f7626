import GatewayConfig
import GatewayCore
import GatewayPolicies
import NIOCore
import NIOHTTP1
import Testing

/// After a 401 and a token refresh, only what the retry rules
/// would replay is sent again, and a 401 refreshes at most once per token
/// value; the step's wiring to its upstream. (The exchange sends a replayed
/// body again: ExchangeBodyReplayTests, OAuthBodyReplayTests.)
extension TokenRefreshStepTests {
    @Test func threePostsRejectedWithOneTokenArePassedOnAndRotateItOnce() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let step = try step(f, store)
        let sent = try await prepared(step, paymentsRequest(method: .POST, body: .bytes(ByteBuffer(string: "charge")))).request
        for _ in 0..<3 {
            #expect(try await verdict(step, .unauthorized, to: sent).isAccept, "a POST without Idempotency-Key is never sent twice")
            f.clock.advance(by: .seconds(5))
        }
        #expect(await eventually { f.authority.tokenCallCount == 2 }, "startup, and one refresh for the rejected token")
        #expect(await eventually { f.events.refreshes == ["payments/first_use/success", "payments/401/success"] })
    }

    @Test func aPostWithIdempotencyKeyIsReplayedWithANewToken() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let step = try step(f, store)
        let keyed = paymentsRequest(method: .POST, body: .bytes(ByteBuffer(string: "x")), headers: ["Idempotency-Key": "k1"])
        let sent = try await prepared(step, keyed).request
        guard case .replay(let wait) = try await verdict(step, .unauthorized, to: sent) else {
            Issue.record("a POST with Idempotency-Key is replayed")
            return
        }
        _ = try await wait.future.get()
        let again = try await prepared(step, keyed).request
        #expect(again.headers.first(name: "Authorization") != sent.headers.first(name: "Authorization"))
        // A body the exchange does not hold all of (over the limit) is not offered a replay.
        #expect(try await verdict(step, .unauthorized, to: again, mayReplay: false).isAccept)
    }

    @Test func aFailedRefreshAfterA401FailsTheReplayWithTokenRefreshFailed() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let step = try step(f, store)
        let sent = try await prepared(step, paymentsRequest()).request
        f.authority.setMode(.invalidGrant)
        guard case .replay(let wait) = try await verdict(step, .unauthorized, to: sent) else {
            Issue.record("a 401 to a GET is replayed")
            return
        }
        let error = await #expect(throws: GatewayError.self) { _ = try await wait.future.get() }
        #expect(error?.code == .tokenRefreshFailed)
        #expect(error?.cause == "invalid_grant")
        #expect(error?.upstream == "api.payments.test:443")
        let response = try #require(error).response()
        #expect(response.status == .unauthorized)
        #expect(response.headers["X-Gateway-Error"] == ["token_refresh_failed"])
        #expect(f.events.refreshes.last == "payments/401/failure")
    }

    @Test func theStepReplacesTheClientsAuthorization() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let (request, _) = try await prepared(step(f, store), paymentsRequest(headers: ["Authorization": "Bearer client-own"]))
        let token = try #require(f.authority.issuedAccessTokens.first)
        #expect(request.headers["Authorization"] == ["Bearer \(token)"])
    }

    /// One policy per OAuth2 upstream, built with its route; other
    /// upstreams' routes have none (see ExchangePhasesTests), and requests
    /// outside the credential's hosts pass untouched.
    @Test func onlyOAuth2UpstreamsGetAPolicyAndItKeepsToTheirHosts() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let payments = f.gatewayConfig().upstreams[0]
        let policy = try #require(TokenRefreshPolicy(upstream: payments, store: store))
        #expect(policy.upstream == "payments")
        #expect(TokenRefreshPolicy(upstream: payments, store: nil) == nil)
        let bearer = UpstreamConfig(name: "github", hosts: [HostPattern("api.github.test")!], auth: AuthConfig(kind: .bearer(token: Secret(source: .inline, value: "b"))))
        #expect(TokenRefreshPolicy(upstream: bearer, store: store) == nil, "a static credential is not OAuth2")
        #expect(TokenRefreshPolicy(upstream: UpstreamConfig(name: "plain", hosts: [HostPattern("plain.test")!]), store: store) == nil)

        var elsewhere = paymentsRequest(upstream: "github")
        elsewhere.host = "api.github.test"
        let (request, waited) = try await prepared(policy.step, elsewhere)
        #expect(!waited && !request.headers.contains(name: "Authorization"))
        #expect(f.authority.tokenCallCount == 0)
    }
}
