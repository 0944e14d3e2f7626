import Foundation
import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOCore
import NIOHTTP1
import Testing

/// The OAuth2 policy in a chain, in process: token injection, 401 → one
/// refresh → one retry, body replay, and single flight under 200 concurrent requests.
@Suite(.timeLimit(.minutes(1)))
struct TokenRefreshPolicyTests {
    /// 200 requests go out with a token the upstream no longer accepts: each
    /// gets 401; all of them wait on one refresh (held until all 200 are
    /// parked on it), then each is retried once and succeeds.
    @Test func twoHundredConcurrent401sShareOneRefreshAndAllSucceed() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let upstream = ProtectedHandler(authority: f.authority)
        let chain = PolicyChain(policies: [f.policy(store)], terminal: upstream)
        _ = try await store.accessToken()  // a token the gateway believes valid…
        f.authority.revokeAccessTokens()  // …that the upstream no longer accepts
        f.authority.holdTokenCalls()

        let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let body = ProxyBody.bytes(ByteBuffer(string: "charge \(i)"))
                    // A POST is replayed after the refresh because it carries Idempotency-Key.
                    let request = paymentsRequest(method: .POST, body: body, headers: ["Idempotency-Key": "charge-\(i)"])
                    let response = try await chain.handle(request, context: testContext())
                    let echoed = String(buffer: try await response.body.collect(upTo: 1024))
                    #expect(echoed == "charge \(i)", "the retry carries the same body")
                    return response.status.code
                }
            }
            #expect(await eventually { await store.refreshWaiters == 200 }, "all 200 wait on the one refresh")
            #expect(upstream.unauthorizedCount == 200)
            #expect(await eventually { f.authority.heldTokenCallCount == 1 })
            #expect(f.authority.tokenCallCount == 2)  // startup + the one refresh, held
            f.authority.releaseTokenCalls()
            var all: [UInt] = []
            for try await status in group { all.append(status) }
            return all
        }
        #expect(statuses == Array(repeating: 200, count: 200))
        #expect(f.authority.tokenCallCount == 2, "exactly one refresh for 200 rejected requests")
        #expect(upstream.attempts.count == 400, "each request: one 401, one retry")
        #expect(f.events.refreshes == ["payments/startup/success", "payments/401/success"])
    }

    @Test func injectsTheBearerTokenAndReplacesTheClientsAuthorization() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let upstream = ProtectedHandler(authority: f.authority)
        let chain = PolicyChain(policies: [f.policy(store)], terminal: upstream)
        let response = try await chain.handle(paymentsRequest(headers: ["Authorization": "Bearer client-own"]), context: testContext())
        #expect(response.status == .ok)
        let token = try #require(f.authority.issuedAccessTokens.first)
        #expect(upstream.attempts.map(\.authorization) == ["Bearer \(token)"])
    }

    @Test func keepLeavesTheClientsAuthorizationAndDoesNotRefresh() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let upstream = ProtectedHandler(authority: f.authority)
        let chain = PolicyChain(policies: [f.policy(store, clientAuth: .keep)], terminal: upstream)
        let response = try await chain.handle(paymentsRequest(headers: ["Authorization": "Bearer client-own"]), context: testContext())
        #expect(response.status == .unauthorized, "the client's own credential, the upstream's own answer")
        #expect(upstream.attempts.map(\.authorization) == ["Bearer client-own"])
        #expect(f.authority.tokenCallCount == 0)
        // Without its own Authorization, the client gets the gateway's token.
        #expect(try await chain.handle(paymentsRequest(), context: testContext()).status == .ok)
    }

    /// Issue 18: one policy per OAuth2 upstream, built with its route; other
    /// upstreams' routes have none (see PolicyChainBindingTests), and requests
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

        let upstream = ProtectedHandler(authority: f.authority)
        let chain = PolicyChain(policies: [policy], terminal: upstream)
        var elsewhere = paymentsRequest(upstream: "github")
        elsewhere.host = "api.github.test"
        _ = try await chain.handle(elsewhere, context: testContext())
        #expect(upstream.attempts.map(\.authorization) == [nil])
        #expect(f.authority.tokenCallCount == 0)
    }

    @Test func streamedBodyWithinTheLimitIsBufferedAndReplayed() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let upstream = ProtectedHandler(authority: f.authority)
        let chain = PolicyChain(policies: [f.policy(store)], terminal: upstream)
        _ = try await store.accessToken()
        f.authority.revokeAccessTokens()
        let bytes = (0..<(512 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let body = ProxyBody.stream(OnceBodySource(bytes), declaredLength: bytes.count)
        let response = try await chain.handle(paymentsRequest(method: .PUT, body: body), context: testContext())
        #expect(response.status == .ok)
        #expect(upstream.attempts.map(\.status) == [401, 200])
        #expect(upstream.attempts.allSatisfy { $0.body == bytes })
    }

    @Test func bodyTooLargeToBufferGetsThe401BackAsIs() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let upstream = ProtectedHandler(authority: f.authority)
        let chain = PolicyChain(policies: [f.policy(store)], terminal: upstream)
        _ = try await store.accessToken()
        f.authority.revokeAccessTokens()
        let bytes = [UInt8](repeating: 7, count: 1024 * 1024 + 1)
        let body = ProxyBody.stream(OnceBodySource(bytes), declaredLength: bytes.count)
        let response = try await chain.handle(paymentsRequest(method: .PUT, body: body), context: testContext())
        #expect(response.status == .unauthorized)
        #expect(String(buffer: try await response.body.collect(upTo: 1024)) == "expired\n")
        #expect(upstream.attempts.count == 1)
        #expect(f.authority.tokenCallCount == 2, "not replayed, but the token is replaced for the next request")
        #expect(try await chain.handle(paymentsRequest(), context: testContext()).status == .ok)
        #expect(f.authority.tokenCallCount == 2)
    }

    @Test func failedRefreshAfter401BecomesTokenRefreshFailed() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let chain = PolicyChain(policies: [f.policy(store)], terminal: ProtectedHandler(authority: f.authority))
        _ = try await store.accessToken()
        f.authority.revokeAccessTokens()
        f.authority.setMode(.invalidGrant)
        let error = await #expect(throws: GatewayError.self) {
            _ = try await chain.handle(paymentsRequest(), context: testContext())
        }
        #expect(error?.code == .tokenRefreshFailed)
        #expect(error?.cause == "invalid_grant")
        let response = try #require(error).response()
        #expect(response.status == .unauthorized)
        #expect(response.headers["X-Gateway-Error"] == ["token_refresh_failed"])
        #expect(f.events.refreshes.last == "payments/401/failure")
    }
}
