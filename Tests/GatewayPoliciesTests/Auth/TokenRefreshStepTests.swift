import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// OAuth2 as a synchronous step of an exchange: the token read from the
/// store's snapshot without a hop, a wait only while a token is obtained (one
/// refresh for every waiting request), and the verdict on a 401.
@Suite(.timeLimit(.minutes(1)))
struct TokenRefreshStepTests {
    let loop = MultiThreadedEventLoopGroup.singleton.next()

    func step(_ f: OAuthFixture, _ store: TokenStore, clientAuth: ClientAuthMode = .replace) throws -> any AttemptStep {
        f.policy(store, clientAuth: clientAuth).step
    }

    /// Runs `prepare` on the loop; a wait is awaited and its edit applied.
    func prepared(_ step: any AttemptStep, _ request: ProxyRequest) async throws -> (request: ProxyRequest, waited: Bool) {
        let decision = try await loop.submit { () -> (ProxyRequest, AttemptStepDecision) in
            var request = request
            let decision = step.prepare(&request, context: testContext(), on: loop)
            return (request, decision)
        }.get()
        var request = decision.0
        switch decision.1 {
        case .proceed:
            return (request, false)
        case .wait(let wait):
            let edit = try await wait.future.get()
            edit?(&request)
            return (request, true)
        case .respond:
            Issue.record("the token step never answers by itself")
            return (request, false)
        }
    }

    func verdict(_ step: any AttemptStep, _ status: HTTPResponseStatus, to request: ProxyRequest, mayReplay: Bool = true) async throws -> AttemptResponseVerdict {
        let head = UpstreamResponseHead(status: status, headers: ["Content-Length": "0"], declaredLength: 0, hasBody: false)
        return try await loop.submit { step.responseHead(head, of: request, context: testContext(), mayReplay: mayReplay, on: loop) }.get()
    }

    @Test func aFreshTokenGoesOnWithoutAWait() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let token = try await store.accessToken()
        let (request, waited) = try await prepared(step(f, store), paymentsRequest())
        #expect(!waited)
        #expect(request.headers.first(name: "Authorization") == token.authorizationValue)
        #expect(f.authority.tokenCallCount == 1)
    }

    @Test func withoutATokenConcurrentRequestsShareOneRefresh() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let step = try step(f, store)
        f.authority.holdTokenCalls()
        let results = try await withThrowingTaskGroup(of: (ProxyRequest, Bool).self) { group in
            for _ in 0..<20 { group.addTask { try await prepared(step, paymentsRequest()) } }
            #expect(await eventually { f.authority.heldTokenCallCount == 1 })
            f.authority.releaseTokenCalls()
            var all: [(ProxyRequest, Bool)] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.allSatisfy { $0.1 }, "every request waited for the token")
        #expect(Set(results.compactMap { $0.0.headers.first(name: "Authorization") }).count == 1)
        #expect(f.authority.tokenCallCount == 1)
    }

    @Test func aTokenDueForRefreshIsRefreshedBeforeTheAttempt() async throws {
        let f = try OAuthFixture(expiresIn: 3600)
        defer { f.cleanUp() }
        let store = f.makeStore()
        let old = try await store.accessToken()
        f.clock.advance(by: .seconds(3600 - 59))  // within refresh_before_expiry (60 s)
        let (request, waited) = try await prepared(step(f, store), paymentsRequest())
        #expect(waited)
        #expect(request.headers.first(name: "Authorization") != old.authorizationValue)
        #expect(f.events.refreshes == ["payments/first_use/success", "payments/expiry/success"])
    }

    @Test func duringBackoffAStillValidTokenIsUsedWithoutWaiting() async throws {
        let f = try OAuthFixture(expiresIn: 3600)
        defer { f.cleanUp() }
        let store = f.makeStore()
        let old = try await store.accessToken()
        f.clock.advance(by: .seconds(3600 - 59))
        f.authority.setMode(.invalidGrant)
        let step = try step(f, store)
        let first = try await prepared(step, paymentsRequest())
        #expect(first.waited, "the failed refresh was waited for")
        #expect(first.request.headers.first(name: "Authorization") == old.authorizationValue)
        let second = try await prepared(step, paymentsRequest())
        #expect(!second.waited, "within the backoff the current token goes on at once")
        #expect(second.request.headers.first(name: "Authorization") == old.authorizationValue)
        #expect(f.authority.tokenCallCount == 2)
    }

    @Test func aFailedRefreshWithoutATokenFailsTheWaitWithTheUpstreamsHostPort() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        f.authority.setMode(.invalidGrant)
        await #expect(throws: GatewayError.self) { _ = try await prepared(step(f, store), paymentsRequest()) }
        do {
            _ = try await prepared(step(f, store), paymentsRequest())
        } catch let error as GatewayError {
            #expect(error.code == .tokenRefreshFailed)
            #expect(error.upstream == "api.payments.test:443")
        }
    }

    @Test func a401ToAGetIsReplayedAfterOneRefresh() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let step = try step(f, store)
        let sent = try await prepared(step, paymentsRequest()).request
        guard case .replay(let wait) = try await verdict(step, .unauthorized, to: sent) else {
            Issue.record("a 401 to a GET is replayed")
            return
        }
        _ = try await wait.future.get()
        let again = try await prepared(step, paymentsRequest())
        #expect(!again.waited)
        #expect(again.request.headers.first(name: "Authorization") != sent.headers.first(name: "Authorization"))
        #expect(f.events.refreshes == ["payments/first_use/success", "payments/401/success"])
        // The same request may not replay twice: the exchange says so.
        #expect(try await verdict(step, .unauthorized, to: again.request, mayReplay: false).isAccept)
    }

    @Test func a401ToAPostIsPassedOnAndTheTokenStillReplaced() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let step = try step(f, store)
        let sent = try await prepared(step, paymentsRequest(method: .POST)).request
        #expect(try await verdict(step, .unauthorized, to: sent).isAccept)
        #expect(await eventually { f.authority.tokenCallCount == 2 }, "replaced for the client's next request")
        #expect(await eventually { store.currentAuthorization() != sent.headers.first(name: "Authorization") })
    }

    @Test func a401ToATokenObtainedAfterA401IsPassedOnWithoutARefresh() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let first = try await store.accessToken()
        let second = try #require(try await store.accessToken(replacing: first))
        var request = paymentsRequest()
        request.headers.replaceOrAdd(name: "Authorization", value: second.authorizationValue)
        #expect(try await verdict(step(f, store), .unauthorized, to: request).isAccept)
        #expect(f.authority.tokenCallCount == 2, "no third call: the upstream rejects even fresh tokens")
    }

    @Test func theClientsOwnAuthorizationIsKeptAndItsRejectionPassedOn() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let step = try step(f, store, clientAuth: .keep)
        let mine = paymentsRequest(headers: ["Authorization": "Bearer the-clients-own"])
        let (request, waited) = try await prepared(step, mine)
        #expect(!waited)
        #expect(request.headers.first(name: "Authorization") == "Bearer the-clients-own")
        #expect(try await verdict(step, .unauthorized, to: request).isAccept)
        #expect(f.authority.tokenCallCount == 0)
    }

    @Test func outOfScopeAndTraceRequestsGetNoToken() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let step = try step(f, store)
        var plain = paymentsRequest()
        plain.scheme = .http
        plain.port = 80
        for request in [plain, paymentsRequest(method: .TRACE)] {
            let (prepared, waited) = try await prepared(step, request)
            #expect(!waited)
            #expect(prepared.headers.first(name: "Authorization") == nil)
        }
        #expect(f.authority.tokenCallCount == 0)
    }

    @Test func onlyAReplayableRequestWithABodyHasItKeptUpToTheReplayLimit() throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let step = try step(f, f.makeStore())
        let body = ProxyBody.bytes(ByteBuffer(string: "x"))
        let limit = TokenRefreshPolicy.defaultReplayLimit
        #expect(step.replayLimit(for: paymentsRequest(method: .POST, body: body, headers: ["Idempotency-Key": "k"])) == limit)
        #expect(step.replayLimit(for: paymentsRequest(method: .PUT, body: body)) == limit)
        #expect(step.replayLimit(for: paymentsRequest(method: .POST, body: body)) == nil, "never replayed: streamed once")
        #expect(step.replayLimit(for: paymentsRequest()) == nil, "no body to keep")
    }
}

extension AttemptResponseVerdict {
    var isAccept: Bool {
        if case .accept = self { return true }
        return false
    }
}
