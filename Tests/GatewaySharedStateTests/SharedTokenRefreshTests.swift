import Foundation
import GatewayConfig
import GatewayCore
import GatewayPolicies
@testable import GatewaySharedState
import GatewayTesting
import Testing

/// OAuth2 token state shared by replicas through a real PostgreSQL: one token
/// call however many replicas need a new token, no forked refresh-token family.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SharedTokenRefreshTests {
    @Test func replicasStartingTogetherMigrateOnceAndAgainIsANoOp() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 3)
        defer { Task { await fixture.stop() } }
        #expect(try await fixture.cluster.psql("SELECT count(*) FROM gateway_schema_migrations") == "\(SharedStateSchema.latestVersion)")
        #expect(try await fixture.databases[0].migrate() == SharedStateSchema.latestVersion)
        let tables = try await fixture.cluster.psql("SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE tablename LIKE 'gateway_%'")
        #expect(tables == "gateway_oauth_tokens,gateway_rate_buckets,gateway_schema_migrations,gateway_upstream_holds")
        await fixture.stop()
    }

    @Test func aRevokedTokenIsReplacedByOneTokenCallAcrossReplicas() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 3)
        fixture.authority.setRevokeFamilyOnReuse(true)
        let stores = (0..<3).map { fixture.store(replica: $0) }
        // First use: one replica obtains the token, the others adopt it.
        let first = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<30 { group.addTask { try await stores[index % 3].accessToken().value } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(first.count == 1)
        #expect(fixture.authority.tokenCallCount == 1)

        // The authority revokes the token: every replica sees 401s at once.
        fixture.authority.revokeAccessTokens()
        let rejected = AccessToken(first.first!)
        let replaced = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<300 { group.addTask { try await stores[index % 3].accessToken(replacing: rejected)?.value } }
            return try await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(Set(replaced).count == 1)
        #expect(replaced.allSatisfy { $0 != nil && $0 != rejected.value })
        #expect(fixture.authority.tokenCallCount == 2)
        #expect(!fixture.authority.familyRevoked)
        // The rotated refresh token was committed: the row holds the one the authority accepts.
        let committed = try await fixture.cluster.psql("SELECT refresh_token FROM gateway_oauth_tokens")
        #expect(fixture.authority.validRefreshTokens == [committed])
        var totalCalls = 0
        for store in stores { totalCalls += await store.tokenCalls }
        #expect(totalCalls == 2)
        await fixture.stop()
    }

    /// Refresh ahead of expiry is coordinated too: when the token nears its
    /// expiry on every replica at once, one of them refreshes.
    @Test func aTokenNearingExpiryIsRefreshedByOneReplica() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 3)
        let clock = ManualClock(secondsSince1970: Date().timeIntervalSince1970)
        let stores = (0..<3).map { fixture.store(replica: $0, clock: clock) }
        let first = try await stores[0].accessToken()
        for store in stores.dropFirst() { #expect(try await store.accessToken() == first) }
        #expect(fixture.authority.tokenCallCount == 1)
        clock.advance(by: .seconds(3600 - 30))  // within refresh_before_expiry (60 s)
        let next = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<30 { group.addTask { try await stores[index % 3].accessToken().value } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(next.count == 1 && next != [first.value])
        #expect(fixture.authority.tokenCallCount == 2)
        await fixture.stop()
    }

    @Test func aReplicaStartingLaterUsesTheCommittedTokenWithoutACall() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 2)
        let token = try await fixture.store(replica: 0).accessToken()
        let later = try await fixture.store(replica: 1).accessToken()
        #expect(later == token)
        #expect(fixture.authority.tokenCallCount == 1)
        await fixture.stop()
    }

    @Test func withTheDatabaseDownTheLocalModeRefreshesAloneAndReconcilesLater() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 1)
        let store = fixture.store(replica: 0)
        _ = try await store.accessToken()
        try await fixture.cluster.stopServer()
        fixture.authority.revokeAccessTokens()
        let rejected = AccessToken(fixture.authority.issuedAccessTokens.last!)
        let local = try #require(try await store.accessToken(replacing: rejected))
        #expect(fixture.authority.tokenCallCount == 2)
        // The database comes back: the token obtained meanwhile (and its rotated refresh token) is written there.
        try await fixture.cluster.startServer()
        var reconciled = ""
        for _ in 0..<100 where reconciled != local.value {
            await store.reconcileIfNeeded()
            reconciled = (try? await fixture.cluster.psql("SELECT access_token FROM gateway_oauth_tokens")) ?? ""
            if reconciled != local.value { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(reconciled == local.value)
        #expect(try await fixture.cluster.psql("SELECT refresh_token FROM gateway_oauth_tokens") == fixture.authority.validRefreshTokens.first)
        await fixture.stop()
    }

    /// A replica that waits past `lock_timeout` for another replica's refresh
    /// (its token call hangs) fails that refresh; it does not take the
    /// database for down and call the token endpoint itself with the same
    /// refresh token (in `local` mode that would fork the rotation).
    @Test func aLockWaitThatTimesOutIsABusyRefreshNotAnOutage() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 2)
        let holder = fixture.store(replica: 0)
        let waiter = fixture.store(replica: 1, lockTimeout: .milliseconds(300))
        fixture.authority.holdTokenCalls()
        let first = Task { try await holder.accessToken() }
        for _ in 0..<200 where fixture.authority.tokenCallCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(fixture.authority.tokenCallCount == 1)

        let error = await #expect(throws: GatewayError.self) { try await waiter.accessToken() }
        #expect(error?.code == .tokenRefreshFailed)
        #expect(error?.cause == "shared_refresh_busy")
        #expect(fixture.authority.tokenCallCount == 1)
        #expect(await waiter.tokenCalls == 0)
        #expect(fixture.databases[1].health.isAvailable)

        fixture.authority.releaseTokenCalls()
        let token = try await first.value
        // Once the holder committed, the waiter's next refresh adopts its token (after the failure's backoff).
        var adopted: AccessToken?
        for _ in 0..<40 where adopted == nil {
            adopted = try? await waiter.accessToken()
            if adopted == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(adopted == token)
        #expect(fixture.authority.tokenCallCount == 1)
        await fixture.stop()
    }

    /// While the database is known to be down (its last operation failed), a
    /// refresh in `fail` mode is refused at once: no connection is tried, so
    /// no request waits out `connect_timeout` for its 503. (Here the server is
    /// up: only the health says otherwise, and the refusal proves nothing was tried.)
    @Test func inFailModeARefreshIsRefusedAtOnceWhileTheDatabaseIsKnownDown() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 1, onUnavailable: .fail)
        let store = fixture.store(replica: 0)
        let first = try await store.accessToken()
        #expect(fixture.authority.tokenCallCount == 1)
        fixture.databases[0].health.recordFailure("test: marked down")
        fixture.authority.revokeAccessTokens()
        let error = await #expect(throws: GatewayError.self) { try await store.accessToken(replacing: first) }
        #expect(error?.code == .sharedStateUnavailable)
        #expect(fixture.authority.tokenCallCount == 1)
        // Once an operation succeeds again (the sync loop's; here marked by hand), refreshes go through.
        fixture.databases[0].health.recordSuccess()
        let second = try await store.accessToken(replacing: first)
        #expect(second != nil && second != first)
        #expect(fixture.authority.tokenCallCount == 2)
        await fixture.stop()
    }

    @Test func withTheDatabaseDownTheFailModeRefusesWith503() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 1, onUnavailable: .fail)
        let store = fixture.store(replica: 0)
        try await fixture.cluster.stopServer()
        let error = await #expect(throws: GatewayError.self) { try await store.accessToken() }
        #expect(error?.code == .sharedStateUnavailable)
        #expect(error?.code.status.code == 503)
        #expect(fixture.authority.tokenCallCount == 0)
        await fixture.stop()
    }
}
