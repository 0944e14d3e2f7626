import GatewayConfig
import Testing

@Suite("warnings")
struct WarningsTests {
    @Test func defaultsHaveNone() {
        #expect(GatewayConfig().warnings.isEmpty)
    }

    @Test func queryAuthWarns() {
        let yaml = """
            upstreams:
              - name: a
                hosts: [a.com]
              - name: maps
                hosts: [maps.test]
                auth:
                  type: query
                  param: key
                  value_env: MAPS_KEY
            """
        let config = TestSupport.parse(yaml, environment: ["MAPS_KEY": "maps-topsecret"])
        #expect(config?.warnings == ["upstreams[1].auth: type query puts a secret in the URL, where it may leak into logs of other systems"])
    }

    @Test func traceRedactFalseWarns() {
        let warnings = TestSupport.parse("trace:\n  redact: false\n")?.warnings ?? []
        #expect(warnings.count == 1)
        #expect(warnings.first?.hasPrefix("trace.redact: false: secrets") == true)
    }

    @Test func inlineSecretsWarnButAnInlineClientIDDoesNot() {
        let yaml = """
            upstreams:
              - name: a
                hosts: [a.com]
                auth:
                  type: oauth2
                  grant: client_credentials
                  token_url: https://auth.test/token
                  client_id: app
                  client_secret: inline-topsecret
            """
        let warnings = TestSupport.parse(yaml)?.warnings ?? []
        #expect(warnings == ["upstreams[0].auth.client_secret: secret written inline in the config file; prefer client_secret_env or client_secret_file"])
        #expect(!warnings.joined().contains("topsecret"))
    }

    @Test func plainHTTPTokenEndpointWarnsUnlessLoopback() {
        func yaml(_ url: String) -> String {
            "upstreams:\n  - name: a\n    hosts: [a.com]\n    auth:\n      type: oauth2\n      grant: client_credentials\n      token_url: \(url)\n      client_id: app\n      client_secret_env: S\n"
        }
        #expect(TestSupport.parse(yaml("http://127.0.0.1:8000/token"), environment: ["S": "s"])?.warnings == [])
        #expect(TestSupport.parse(yaml("http://localhost:8000/token"), environment: ["S": "s"])?.warnings == [])
        #expect(
            TestSupport.parse(yaml("http://auth.test/token"), environment: ["S": "s"])?.warnings
                == ["upstreams[0].auth.token_url: plain http sends client credentials and tokens unencrypted"])
    }

    @Test func insecureSkipVerifyWarns() {
        let yaml = "upstreams:\n  - name: a\n    hosts: [a.com]\n    tls:\n      insecure_skip_verify: true\n"
        #expect(TestSupport.parse(yaml)?.warnings == ["upstreams[0].tls.insecure_skip_verify: the upstream's certificate chain and host name are not verified"])
    }
}

/// Warnings for an admin listener off loopback and for a
/// credential sent to any host.
@Suite("warnings: exposure")
struct ExposureWarningsTests {
    @Test func adminOffLoopbackWarns() {
        let warnings = TestSupport.parse("listen:\n  admin: 0.0.0.0:9090\n")?.warnings ?? []
        #expect(warnings.contains { $0.hasPrefix("listen.admin: 0.0.0.0 is not a loopback address") })
        #expect(TestSupport.parse("listen:\n  admin: 127.0.0.1:9191\n")?.warnings.isEmpty == true)
    }

    @Test func anyHostWithAuthWarns() {
        let yaml = """
            upstreams:
              - name: everything
                hosts: ["*"]
                auth: { type: bearer, token_env: TOKEN }
              - name: plain
                hosts: ["*"]
            """
        let warnings = TestSupport.parse(yaml, environment: ["TOKEN": "tok-abcdef"])?.warnings ?? []
        #expect(warnings == ["upstreams[0].hosts: * with auth sends this credential to every host clients name (within its scope); list the hosts it belongs to"])
    }
}
