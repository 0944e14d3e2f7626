import GatewayConfig
import GatewayCore
import GatewayPolicies
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing

/// Issue 15 item 7: after a 401 and a token refresh, only what the retry rules
/// would replay is sent again, and a 401 refreshes at most once per token value.
@Suite(.timeLimit(.minutes(1)))
struct TokenReplayRulesTests {
    /// An upstream that rejects every token.
    final class AlwaysUnauthorized: ProxyHandler, Sendable {
        private let box = NIOLockedValueBox<[String?]>([])
        var authorizations: [String?] { box.withLockedValue { $0 } }
        func handle(_ request: ProxyRequest, context: RequestContext) async throws -> ProxyResponse {
            try await request.body.forEachChunk { _ in }
            box.withLockedValue { $0.append(request.headers.first(name: "Authorization")) }
            return ProxyResponse(status: .unauthorized, headers: ["Content-Length": "0"], body: .empty)
        }
    }

    @Test func threePostsToAnAlways401EndpointReachItOnceEachAndRotateOnce() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let upstream = AlwaysUnauthorized()
        let chain = PolicyChain(policies: [f.policy(store)], terminal: upstream)
        for i in 0..<3 {
            let body = ProxyBody.bytes(ByteBuffer(string: "charge \(i)"))
            let response = try await chain.handle(paymentsRequest(method: .POST, body: body), context: testContext())
            #expect(response.status == .unauthorized)
            f.clock.advance(by: .seconds(5))
        }
        #expect(upstream.authorizations.count == 3, "a POST without Idempotency-Key is never sent twice")
        #expect(f.authority.tokenCallCount == 2, "startup, and one refresh for the rejected token")
        #expect(f.events.refreshes == ["payments/startup/success", "payments/401/success"])
    }

    @Test func aPostWithIdempotencyKeyIsReplayed() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let upstream = ProtectedHandler(authority: f.authority)
        let chain = PolicyChain(policies: [f.policy(store)], terminal: upstream)
        _ = try await store.accessToken()
        f.authority.revokeAccessTokens()
        let request = paymentsRequest(method: .POST, body: .bytes(ByteBuffer(string: "x")), headers: ["Idempotency-Key": "k1"])
        #expect(try await chain.handle(request, context: testContext()).status == .ok)
        #expect(upstream.attempts.map(\.status) == [401, 200])
    }

    @Test func aPostWithoutIdempotencyKeyGetsThe401AndTheNextRequestTheNewToken() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let upstream = ProtectedHandler(authority: f.authority)
        let chain = PolicyChain(policies: [f.policy(store)], terminal: upstream)
        _ = try await store.accessToken()
        f.authority.revokeAccessTokens()
        let post = paymentsRequest(method: .POST, body: .bytes(ByteBuffer(string: "x")))
        #expect(try await chain.handle(post, context: testContext()).status == .unauthorized)
        #expect(upstream.attempts.map(\.status) == [401])
        #expect(try await chain.handle(post, context: testContext()).status == .ok)
        #expect(f.authority.tokenCallCount == 2)
    }

    @Test func a401WithTheTokenJustObtainedDoesNotRefreshAgain() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let upstream = AlwaysUnauthorized()
        let chain = PolicyChain(policies: [f.policy(store)], terminal: upstream)
        // GET: 401 with the startup token, one refresh, one replay (401 again).
        #expect(try await chain.handle(paymentsRequest(), context: testContext()).status == .unauthorized)
        #expect(upstream.authorizations.count == 2)
        f.clock.advance(by: .seconds(10))
        // The new token rejected too: no second refresh, no replay.
        #expect(try await chain.handle(paymentsRequest(), context: testContext()).status == .unauthorized)
        #expect(upstream.authorizations.count == 3)
        #expect(f.authority.tokenCallCount == 2)
        let tokens = Set(upstream.authorizations.compactMap { $0 })
        #expect(tokens.count == 2)
    }
}
