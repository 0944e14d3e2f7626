import GatewayConfig
import GatewayCore
import Testing

@testable import GatewayApp

/// Which trust stores are parsed at start: only those a configured TLS
/// connection uses, so a plain HTTP gateway does not hold the system bundle.
@Suite struct TLSPreloadTests {
    private func config(_ upstreams: String) throws -> GatewayConfig {
        try ConfigLoader.parse(yaml: "upstreams:\n" + upstreams, file: "/tmp/gateway.yaml", environment: ["T": "token", "S": "secret"])
    }

    @Test func theDefaultConfigParsesNoTrustStoreAtStart() {
        #expect(TLSPreload.settings(for: GatewayConfig()).isEmpty)
    }

    @Test func anHTTPOriginNeedsNoTrustStore() throws {
        let config = try config("""
              - name: local
                hosts: ["127.0.0.1"]
                origin: http://127.0.0.1:8081
                auth: { type: bearer, token_env: T }
            """)
        #expect(TLSPreload.settings(for: config).isEmpty)
    }

    @Test func anHTTPSOriginOrNoOriginLoadsItsUpstreamsSettings() throws {
        let config = try config("""
              - name: pinned
                hosts: ["api.example.com"]
                origin: https://api.example.com
                tls:
                  pins: ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]
              - name: any-scheme
                hosts: ["*.example.org"]
            """)
        let settings = TLSPreload.settings(for: config)
        #expect(settings.count == 2)
        #expect(settings.contains { $0.pins.count == 1 })
        #expect(settings.contains(.standard))
    }

    @Test func anHTTPSTokenEndpointLoadsTheSystemStoreEvenBehindAnHTTPOrigin() throws {
        let config = try config("""
              - name: local
                hosts: ["127.0.0.1"]
                origin: http://127.0.0.1:8081
                auth:
                  type: oauth2
                  grant: client_credentials
                  token_url: https://auth.example.com/oauth/token
                  client_id: app
                  client_secret_env: S
            """)
        #expect(TLSPreload.settings(for: config) == [.standard])
    }
}
