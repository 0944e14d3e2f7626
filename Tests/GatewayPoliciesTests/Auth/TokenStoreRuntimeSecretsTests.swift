import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import Logging
import Testing

/// The token stores tell the trace redactor which tokens they obtained at run
/// time (issue 39): the current one, those it replaced, and those of a store a
/// reload retired, read without an actor hop. Checks are booleans: no token
/// is ever printed.
@Suite(.timeLimit(.minutes(1)))
struct TokenStoreRuntimeSecretsTests {
    @Test func currentReplacedAndRetiredTokensArePublished() async throws {
        var f = try OAuthFixture(expiresIn: 600)
        defer { f.cleanUp() }
        let registry = TokenStoreRegistry(clock: f.clock)
        let noneYet = registry.runtimeSecrets().isEmpty
        #expect(noneYet, "no store, no token")
        let logger = Logger(label: "t")
        let store = try #require(registry.stores(for: f.gatewayConfig(), transport: f.authority.tokenEndpoint, events: f.events, logger: logger)["payments"])

        let first = try await store.accessToken()
        var published = Set(registry.runtimeSecrets().map(\.value))
        let hasFirst = published.contains(first.value)
        #expect(hasFirst, "the current access token is published")
        let names = Set(registry.runtimeSecrets().map(\.name))
        #expect(names.isSubset(of: ["payments_ACCESS_TOKEN", "payments_REFRESH_TOKEN"]))

        // Expired: the refresh replaces it; both are published.
        f.clock.advance(by: .seconds(601))
        let second = try await store.accessToken()
        let replaced = second != first
        #expect(replaced, "control: a new token")
        published = Set(registry.runtimeSecrets().map(\.value))
        let hasBoth = published.contains(first.value) && published.contains(second.value)
        #expect(hasBoth, "the current and the replaced access token are published")

        // A reload that changes the credential retires the store; its tokens stay published.
        f.oauth.scope = "read"
        let next = try #require(registry.stores(for: f.gatewayConfig(), transport: f.authority.tokenEndpoint, events: f.events, logger: logger)["payments"])
        #expect(next !== store)
        published = Set(registry.runtimeSecrets().map(\.value))
        let keepsRetired = published.contains(first.value) && published.contains(second.value)
        #expect(keepsRetired, "a retired store's tokens are still published")
    }
}
