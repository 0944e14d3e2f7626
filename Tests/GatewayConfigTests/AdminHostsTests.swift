import GatewayConfig
import Testing

/// `listen.admin_hosts`: the further `Host` names the admin listener answers.
@Suite("listen.admin_hosts")
struct AdminHostsTests {
    @Test func defaultsToNone() {
        #expect(GatewayConfig().listen.adminHosts == [])
        #expect(TestSupport.parse("listen:\n  admin_hosts:\n")?.listen.adminHosts == [])
    }

    @Test func decodesNamesAndAddressesAsWritten() {
        let config = TestSupport.parse("listen:\n  admin_hosts: [gateway-1, Metrics.Internal, 10.0.0.5, \"::1\", \"[fd00::5]\"]\n")
        #expect(config?.listen.adminHosts == ["gateway-1", "Metrics.Internal", "10.0.0.5", "::1", "[fd00::5]"])
    }

    /// A port, a wildcard, a URL, a non-canonical IPv4 form, a space, a bracketed name.
    @Test(arguments: ["gateway-1:9090", "*", "*.example.com", "http://gateway-1", "127.1", "host name", "[nope]"])
    func refusesWhatIsNotAHostName(text: String) {
        TestSupport.expectError(
            "listen:\n  admin_hosts: [ok.example, \"\(text)\"]\n", keyPath: "listen.admin_hosts[1]", contains: "got '\(text)'")
    }

    @Test func mustBeAListOfNonEmptyNames() {
        TestSupport.expectError("listen:\n  admin_hosts: gateway-1\n", keyPath: "listen.admin_hosts", contains: "expected a list of host names")
        TestSupport.expectError("listen:\n  admin_hosts: [\"\"]\n", keyPath: "listen.admin_hosts[0]", contains: "must not be empty")
    }

    @Test func survivesTheRedactedRoundTrip() throws {
        var config = GatewayConfig()
        config.listen.adminHosts = ["gateway-1", "10.0.0.5", "::1", "[fd00::5]"]
        let yaml = config.redactedYAML()
        #expect(yaml.contains("  admin_hosts: [gateway-1, "), "\(yaml)")
        #expect(try ConfigLoader.parse(yaml: yaml, file: "r.yaml", environment: [:]) == config)
        #expect(GatewayConfig().redactedYAML().contains("  admin_hosts: []"))
    }
}
