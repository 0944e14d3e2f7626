import GatewayConfig
import GatewayCore
import Logging
import Testing

@Suite("Defaults")
struct DefaultsTests {
    @Test func initHasDocumentedDefaults() {
        let config = GatewayConfig()
        #expect(config.listen.proxy == BindAddress(host: "127.0.0.1", port: 8080))
        #expect(config.listen.admin == BindAddress(host: "127.0.0.1", port: 9090))
        #expect(config.open == false)
        #expect(config.logLevel == .info)
        #expect(config.stateDir == ".gateway")
        #expect(config.debug == false)
        #expect(config.access.allow == [HostPattern("*")!])
        #expect(config.access.deny.isEmpty)
        #expect(config.access.connectPorts == [443])
        #expect(config.proxyAuth == nil)
        #expect(config.limits.maxHeadBytes == 32 * 1024)
        #expect(config.limits.headerTimeout == .seconds(10))
        #expect(config.limits.idleTimeout == .seconds(60))
        #expect(config.limits.drainTimeout == .seconds(30))
        #expect(config.pool.maxConnectionsPerHost == 64)
        #expect(config.pool.idleTimeout == .seconds(60))
        #expect(config.pool.connectTimeout == .seconds(5))
        #expect(config.pool.requestTimeout == .seconds(60))
        #expect(config.upstreams.isEmpty)
        #expect(config.trace.file == ".gateway/trace.jsonl")
        #expect(config.trace.maxFileBytes == 10 * 1024 * 1024)
        #expect(config.trace.redact)
        #expect(config.metrics.maxEndpointsPerUpstream == 200)
        #expect(config.metrics.statsWindow == .seconds(300))
        #expect(config.interception.caCert == ".gateway/ca.pem")
        #expect(config.interception.caKey == ".gateway/ca-key.pem")
        #expect(config.interception.leafCacheSize == 1000)
        #expect(config.warnings.isEmpty)
    }

    @Test func upstreamFeaturesDefaultToOff() throws {
        let upstream = try #require(TestSupport.parse("upstreams:\n  - name: a\n    hosts: [a.com]\n")?.upstreams.first)
        #expect(upstream.endpoints.isEmpty)
        #expect(upstream.intercept == false)
        #expect(upstream.auth == nil)
        #expect(upstream.retry == nil)
        #expect(upstream.rateLimit == nil)
    }

    @Test(arguments: ["", "# only a comment\n", "---\n", "~\n"])
    func emptyDocumentGivesDefaults(yaml: String) {
        #expect(TestSupport.parse(yaml) == GatewayConfig())
    }

    @Test func emptySectionsAndNullValuesGiveDefaults() {
        let yaml = """
            listen:
            access:
            limits:
              header_timeout:
            pool: ~
            upstreams:
            """
        #expect(TestSupport.parse(yaml) == GatewayConfig())
    }

    @Test func partialSectionKeepsOtherDefaults() {
        let config = TestSupport.parse("limits:\n  idle_timeout: 5s\n")
        #expect(config?.limits == ListenerLimits(idleTimeout: .seconds(5)))
    }

    @Test func defaultsPassValidation() throws {
        try GatewayConfig().validate()
    }
}
