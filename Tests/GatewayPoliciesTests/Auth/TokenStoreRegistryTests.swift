import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import Logging
import Testing

/// Token stores survive reloads unless the credential changed.
@Suite(.timeLimit(.minutes(1)))
struct TokenStoreRegistryTests {
    @Test func reloadKeepsTheStoreAndItsTokenUnlessTheCredentialChanges() async throws {
        var f = try OAuthFixture()
        defer { f.cleanUp() }
        let registry = TokenStoreRegistry(clock: f.clock)
        let logger = Logger(label: "t")
        let first = try #require(registry.stores(for: f.gatewayConfig(), transport: f.authority.tokenEndpoint, events: f.events, logger: logger)["payments"])
        let token = try await first.accessToken()

        // Same credential (other settings may change): the same store, no new token call.
        var reloaded = f.gatewayConfig()
        reloaded.upstreams.append(UpstreamConfig(name: "other", hosts: [HostPattern("other.test")!]))
        let again = try #require(registry.stores(for: reloaded, transport: f.authority.tokenEndpoint, events: f.events, logger: logger)["payments"])
        #expect(again === first)
        #expect(try await again.accessToken() == token)
        #expect(f.authority.tokenCallCount == 1)

        // Another scope is another credential: a new store.
        f.oauth.scope = "read"
        let changed = try #require(registry.stores(for: f.gatewayConfig(), transport: f.authority.tokenEndpoint, events: f.events, logger: logger)["payments"])
        #expect(changed !== first)

        // Static or no auth: no store.
        var plain = f.gatewayConfig()
        plain.upstreams[0].auth = AuthConfig(kind: .bearer(token: Secret(source: .inline, value: "x")))
        #expect(registry.stores(for: plain, transport: f.authority.tokenEndpoint, events: f.events, logger: logger).isEmpty)
    }

    @Test func anUnusableTokenURLFailsRequestsWithoutACall() async throws {
        var f = try OAuthFixture()
        defer { f.cleanUp() }
        f.oauth.tokenURL = "not a url"
        let registry = TokenStoreRegistry(clock: f.clock)
        let store = try #require(registry.stores(for: f.gatewayConfig(), transport: f.authority.tokenEndpoint, events: f.events, logger: Logger(label: "t"))["payments"])
        let error = await #expect(throws: GatewayError.self) { try await store.accessToken() }
        #expect(error?.cause == "invalid_token_url")
        #expect(f.authority.tokenCallCount == 0)
    }
}
