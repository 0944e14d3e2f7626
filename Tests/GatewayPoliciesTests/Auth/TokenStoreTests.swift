import Foundation
import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import Testing

/// The token store: single flight, expiry with an injected clock, failures and
/// backoff, persistence and restart.
@Suite(.timeLimit(.minutes(1)))
struct TokenStoreTests {
    @Test func firstUseFetchesOnceThenReusesTheToken() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let first = try await store.accessToken()
        let second = try await store.accessToken()
        #expect(first == second)
        #expect(f.authority.tokenCallCount == 1)
        #expect(f.authority.isValid(accessToken: first.value))
        #expect(f.events.refreshes == ["payments/first_use/success"])
        let call = try #require(f.authority.tokenCalls.first)
        #expect(call.form["grant_type"] == "refresh_token")
        #expect(call.form["scope"] == "read write")
        #expect(call.clientAuthentication == "basic")
    }

    /// 200 callers find the token expired at once: one token call, all get the new token.
    @Test func expiredTokenTwoHundredConcurrentCallersOneTokenCall() async throws {
        let f = try OAuthFixture(expiresIn: 600)
        defer { f.cleanUp() }
        let store = f.makeStore()
        let old = try await store.accessToken()
        f.clock.advance(by: .seconds(601))
        f.authority.holdTokenCalls()

        let tokens = try await withThrowingTaskGroup(of: AccessToken.self) { group in
            for _ in 0..<200 { group.addTask { try await store.accessToken() } }
            // Every caller is parked on the one refresh before it may finish.
            #expect(await eventually { await store.refreshWaiters == 200 })
            #expect(await eventually { f.authority.heldTokenCallCount == 1 })
            #expect(f.authority.tokenCallCount == 2)
            f.authority.releaseTokenCalls()
            var all: [AccessToken] = []
            for try await token in group { all.append(token) }
            return all
        }
        #expect(tokens.count == 200)
        #expect(Set(tokens.map(\.value)).count == 1)
        #expect(tokens.first != old)
        #expect(f.authority.tokenCallCount == 2, "startup + exactly one refresh")
        #expect(await store.tokenCalls == 2)
        #expect(f.events.refreshes == ["payments/first_use/success", "payments/expiry/success"])
    }

    @Test func proactiveRefreshStartsRefreshBeforeExpiryBeforeExpiry() async throws {
        let f = try OAuthFixture(expiresIn: 3600)
        defer { f.cleanUp() }
        let store = f.makeStore()
        let first = try await store.accessToken()
        f.clock.advance(by: .seconds(3600 - 61))
        #expect(try await store.accessToken() == first, "outside refresh_before_expiry (60 s): no call")
        #expect(f.authority.tokenCallCount == 1)
        f.clock.advance(by: .seconds(2))  // 59 s before expiry
        let second = try await store.accessToken()
        #expect(second != first)
        #expect(f.authority.tokenCallCount == 2)
        #expect(f.events.refreshes.last == "payments/expiry/success")
        // The new token is good for another hour.
        f.clock.advance(by: .seconds(3000))
        #expect(try await store.accessToken() == second)
        #expect(f.authority.tokenCallCount == 2)
    }

    @Test func shortLivedTokenIsRefreshedAtHalfItsLifetimeNotOnEveryRequest() async throws {
        let f = try OAuthFixture(expiresIn: 30)  // shorter than refresh_before_expiry (60 s)
        defer { f.cleanUp() }
        let store = f.makeStore()
        let first = try await store.accessToken()
        f.clock.advance(by: .seconds(10))
        #expect(try await store.accessToken() == first)
        f.clock.advance(by: .seconds(6))
        #expect(try await store.accessToken() != first)
        #expect(f.authority.tokenCallCount == 2)
    }

    /// 50 callers wait on one refresh that fails: each gets the failure once,
    /// one token call; then backoff: no call, fail fast; after it, a new call.
    @Test func failedRefreshReachesEveryWaiterOnceThenBacksOff() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        f.authority.setMode(.invalidGrant)
        f.authority.holdTokenCalls()
        let results = await withTaskGroup(of: Result<AccessToken, GatewayError>.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    do { return .success(try await store.accessToken()) } catch { return .failure(error as! GatewayError) }
                }
            }
            #expect(await eventually { await store.refreshWaiters == 50 })
            f.authority.releaseTokenCalls()
            var all: [Result<AccessToken, GatewayError>] = []
            for await result in group { all.append(result) }
            return all
        }
        let errors = results.compactMap { if case .failure(let e) = $0 { e } else { nil } }
        #expect(errors.count == 50)
        #expect(errors.allSatisfy { $0.code == .tokenRefreshFailed && $0.cause == "invalid_grant" && $0.status == .unauthorized })
        #expect(f.authority.tokenCallCount == 1)
        #expect(f.events.refreshes == ["payments/first_use/failure"])

        // Within the backoff (1 s after the first failure): fail fast, no call.
        f.authority.setMode(.normal)
        await #expect(throws: GatewayError.self) { try await store.accessToken() }
        #expect(f.authority.tokenCallCount == 1)
        // After it: a new attempt (the endpoint has recovered).
        f.clock.advance(by: .seconds(1))
        _ = try await store.accessToken()
        #expect(f.authority.tokenCallCount == 2)
        #expect(f.events.refreshes == ["payments/first_use/failure", "payments/first_use/success"])
    }

    @Test func backoffDoublesUpToSixtySeconds() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        f.authority.setMode(.serverError(503))
        var waits: [Int] = []
        for _ in 0..<8 {
            await #expect(throws: GatewayError.self) { try await store.accessToken() }
            let calls = f.authority.tokenCallCount
            var waited = 0
            while f.authority.tokenCallCount == calls {
                f.clock.advance(by: .seconds(1))
                waited += 1
                let error = await #expect(throws: GatewayError.self) { try await store.accessToken() }
                #expect(error?.cause == "server_error", "the endpoint's own error code")
            }
            waits.append(waited)
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60])
    }

    @Test func timeoutIsAFailureWithReasonTimeout() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore(timeout: .seconds(5))
        f.authority.holdTokenCalls()
        let call = Task { try await store.accessToken() }
        #expect(await eventually { f.authority.heldTokenCallCount == 1 })
        #expect(await eventually { f.clock.sleeperCount == 1 })
        f.clock.advance(by: .seconds(5))
        await #expect { _ = try await call.value } throws: { ($0 as? GatewayError)?.cause == "timeout" }
        f.authority.releaseTokenCalls()
    }

    @Test func rotatedRefreshTokenIsPersistedAtomicallyWithMode0600() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let token = try await store.accessToken()
        let rotated = try #require(f.authority.issuedRefreshTokens.last)
        #expect(f.authority.validRefreshTokens == [rotated], "the initial refresh token is spent")

        let path = f.stateDir + "/payments.json"
        let saved = try JSONDecoder().decode(OAuth2TokenState.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(saved.refreshToken == rotated)
        #expect(saved.accessToken == token.value)
        #expect(saved.expiresAt == f.clock.secondsSince1970 + 3600)
        #expect(saved.identity == CredentialIdentity.of(f.oauth))
        let fileMode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(fileMode == 0o600)
        let dirMode = try FileManager.default.attributesOfItem(atPath: f.stateDir)[.posixPermissions] as? Int
        #expect(dirMode == 0o700)
        // Nothing but the final file: the temporary file was renamed, not copied.
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.stateDir) == ["payments.json"])
    }

    @Test func aRestartedStoreReusesTheStoredTokenWithoutATokenCall() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let token = try await f.makeStore().accessToken()
        #expect(f.authority.tokenCallCount == 1)

        let restarted = f.makeStore()
        #expect(try await restarted.accessToken() == token)
        #expect(f.authority.tokenCallCount == 1)
        // When it expires, the restarted store refreshes with the rotated refresh token.
        f.clock.advance(by: .seconds(3600))
        let next = try await restarted.accessToken()
        #expect(next != token)
        #expect(f.authority.tokenCallCount == 2)
        #expect(f.authority.tokenCalls.last?.form["refresh_token"] == f.authority.issuedRefreshTokens.first)
    }

    @Test func stateWrittenForAnotherCredentialIsIgnored() async throws {
        var f = try OAuthFixture()
        defer { f.cleanUp() }
        _ = try await f.makeStore().accessToken()
        // The user replaced the refresh token in the config (e.g. after a revocation).
        f.authority.setMode(.normal)
        f.oauth.refreshToken = Secret(source: .env("NEW_RT"), value: "rt-replaced")
        let store = f.makeStore()
        await #expect(throws: GatewayError.self) { try await store.accessToken() }
        #expect(f.authority.tokenCalls.last?.form["refresh_token"] == "rt-replaced", "the configured token is used, not the stale stored one")
    }

    @Test func unauthorizedJoinsOneRefreshAndLateRejectionsGetTheNewToken() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        let old = try await store.accessToken()
        f.authority.revokeAccessTokens()
        let fresh = try #require(try await store.accessToken(replacing: old))
        #expect(fresh != old)
        // A request that was rejected with the old token after the refresh: no new call.
        #expect(try await store.accessToken(replacing: old) == fresh)
        #expect(f.authority.tokenCallCount == 2)
        #expect(f.events.refreshes.last == "payments/401/success")
        // The fresh token rejected at once again: no refresh loop, the 401 goes back.
        #expect(try await store.accessToken(replacing: fresh) == nil)
        #expect(f.authority.tokenCallCount == 2)
        f.clock.advance(by: .seconds(2))
        #expect(try await store.accessToken(replacing: fresh) == nil, "not a few seconds later either")
        f.clock.advance(by: TokenStore.unauthorizedRefreshInterval)
        #expect(try await store.accessToken(replacing: fresh) != nil)
        #expect(f.authority.tokenCallCount == 3)
    }

    @Test func secretsNeverAppearInLogsOrErrors() async throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let store = f.makeStore()
        _ = try await store.accessToken()
        f.clock.advance(by: .seconds(3600))
        _ = try await store.accessToken()
        f.authority.setMode(.invalidGrant)
        f.clock.advance(by: .seconds(3600))
        let error = await #expect(throws: GatewayError.self) { try await store.accessToken() }
        let body = String(buffer: try #require(error).jsonBody())
        #expect(body.contains("\"cause\":\"invalid_grant\""))
        #expect(body.contains("token_refresh_failed"))
        #expect(!f.logs.text.isEmpty)
        for secret in f.secrets {
            #expect(!f.logs.text.contains(secret))
            #expect(!body.contains(secret))
            #expect(!"\(error!)".contains(secret))
        }
    }
}
