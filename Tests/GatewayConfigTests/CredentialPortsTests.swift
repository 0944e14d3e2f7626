import GatewayConfig
import GatewayCore
import Testing

/// `ports`: where an upstream's credential may go over TLS.
@Suite("upstream ports")
struct CredentialPortsTests {
    @Test func portsAreDecodedAndScopeTheCredential() {
        let upstream = TestSupport.parse(UpstreamTests.one("    ports: [443, 8443]\n"))?.upstreams.first
        #expect(upstream?.ports == [443, 8443])
        #expect(upstream?.credentialScope == CredentialScope(.tls(hosts: [HostPattern("api.example.com")!], ports: [443, 8443])))
    }

    @Test func withoutPortsOrOriginTheScopeIsTLSOn443() {
        let upstream = TestSupport.parse(UpstreamTests.one(""))?.upstreams.first
        #expect(upstream?.ports == nil)
        #expect(upstream?.credentialScope == CredentialScope(.tls(hosts: [HostPattern("api.example.com")!], ports: [443])))
    }

    @Test func anOriginIsItsOwnScope() {
        let upstream = TestSupport.parse(UpstreamTests.one("    origin: http://127.0.0.1:8081\n"))?.upstreams.first
        #expect(upstream?.credentialScope == CredentialScope(.origin(UpstreamOrigin("http://127.0.0.1:8081")!)))
    }

    @Test func portsWithAnOriginIsAMistake() {
        TestSupport.expectError(
            UpstreamTests.one("    origin: https://api.example.com\n    ports: [8443]\n"),
            keyPath: "upstreams[0].ports", contains: "no effect")
    }

    @Test func portsMustBeValid() {
        TestSupport.expectError(UpstreamTests.one("    ports: [0]\n"), keyPath: "upstreams[0].ports[0]", contains: "1 to 65535")
        TestSupport.expectError(UpstreamTests.one("    ports: []\n"), keyPath: "upstreams[0].ports", contains: "at least one")
    }
}
