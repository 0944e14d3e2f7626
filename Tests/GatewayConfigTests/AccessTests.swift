import GatewayConfig
import GatewayCore
import Testing

@Suite("access")
struct AccessTests {
    static func access(allow: [String], deny: [String] = []) -> AccessConfig {
        AccessConfig(allow: allow.map { HostPattern($0)! }, deny: deny.map { HostPattern($0)! })
    }

    @Test func defaultAllowsEveryHost() {
        let access = AccessConfig()
        #expect(access.isAllowed(host: "example.com"))
        #expect(access.isAllowed(host: "10.0.0.1"))
        #expect(access.allowsConnect(port: 443))
        #expect(!access.allowsConnect(port: 22))
    }

    @Test func denyWinsOverAllow() {
        let access = Self.access(allow: ["*"], deny: ["evil.example.com", "*.tracker.net"])
        #expect(access.isAllowed(host: "example.com"))
        #expect(!access.isAllowed(host: "evil.example.com"))
        #expect(!access.isAllowed(host: "EVIL.Example.com"))
        #expect(!access.isAllowed(host: "evil.example.com."))
        #expect(!access.isAllowed(host: "a.tracker.net"))
        #expect(access.isAllowed(host: "tracker.net"))  // *.x does not match the apex
    }

    @Test func allowListIsExclusive() {
        let access = Self.access(allow: ["api.example.com", "*.cdn.example.com"], deny: ["old.cdn.example.com"])
        #expect(access.isAllowed(host: "api.example.com"))
        #expect(access.isAllowed(host: "Api.Example.Com"))
        #expect(access.isAllowed(host: "img.cdn.example.com"))
        #expect(!access.isAllowed(host: "old.cdn.example.com"))
        #expect(!access.isAllowed(host: "cdn.example.com"))
        #expect(!access.isAllowed(host: "example.com"))
        #expect(!access.isAllowed(host: "api.example.com.evil.net"))
        #expect(!access.isAllowed(host: ""))
    }

    @Test func emptyAllowDeniesEverything() {
        let config = TestSupport.parse("access:\n  allow: []\n")
        #expect(config?.access.isAllowed(host: "example.com") == false)
    }

    @Test func ipv6LiteralsMatchWithOrWithoutBrackets() {
        let access = Self.access(allow: ["::1"])
        #expect(access.isAllowed(host: "::1"))
        #expect(access.isAllowed(host: "[::1]"))
    }

    @Test func decodesFromYAML() {
        let config = TestSupport.parse(
            """
            access:
              allow: [api.example.com, "*.example.org"]
              deny: [bad.example.org]
              connect_ports: [443, 8443]
            """
        )
        #expect(config?.access.isAllowed(host: "x.example.org") == true)
        #expect(config?.access.isAllowed(host: "bad.example.org") == false)
        #expect(config?.access.connectPorts == [443, 8443])
    }

    @Test(arguments: ["api.*.com", "a b.com", "http://a.com", "", "api.example.com:443", "**.a.com"])
    func invalidHostPatternIsNamed(pattern: String) {
        TestSupport.expectError(
            "access:\n  deny: [ok.com, \"\(pattern)\"]\n", keyPath: "access.deny[1]", contains: "not a host pattern")
    }

    @Test func connectPortsMustBeNonEmpty() {
        TestSupport.expectError("access:\n  connect_ports: []\n", keyPath: "access.connect_ports", contains: "at least one port")
    }

    @Test(arguments: ["0", "65536", "-1"])
    func connectPortsMustBeInRange(port: String) {
        TestSupport.expectError(
            "access:\n  connect_ports: [443, \(port)]\n", keyPath: "access.connect_ports[1]", contains: "from 1 to 65535")
    }

    @Test func connectPortMustBeAnInteger() {
        TestSupport.expectError(
            "access:\n  connect_ports: [https]\n", keyPath: "access.connect_ports[0]", contains: "expected an integer, got 'https'")
    }
}
