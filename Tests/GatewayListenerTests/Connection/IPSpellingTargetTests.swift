@testable import GatewayListener
import Testing

/// One spelling per IP address in request targets, so that
/// access rules cannot be bypassed by another.
struct IPSpellingTargetTests {
    @Test(arguments: ["2130706434", "127.2", "0x7f000002", "0177.0.0.2", "127.0.0.02", "127.0.0.2.", "0x7f.0.0.2", "1.2.3.4.5", "127.1.0x2"])
    func nonCanonicalIPv4IsMalformed(_ host: String) {
        #expect(ClientTarget.parse("http://\(host)/", isConnect: false) == nil)
        #expect(ClientTarget.parse("http://\(host):8080/", isConnect: false) == nil)
        #expect(ClientTarget.parse("\(host):443", isConnect: true) == nil)
    }

    @Test func canonicalIPv4AndNamesStillParse() {
        #expect(ClientTarget.parse("http://127.0.0.2/", isConnect: false) == .absolute(scheme: .http, host: "127.0.0.2", port: 80, target: "/"))
        #expect(ClientTarget.parse("http://0.0.0.0:81/", isConnect: false) == .absolute(scheme: .http, host: "0.0.0.0", port: 81, target: "/"))
        #expect(ClientTarget.parse("http://api2.example.com/", isConnect: false) == .absolute(scheme: .http, host: "api2.example.com", port: 80, target: "/"))
        #expect(ClientTarget.parse("http://0x7f.example/", isConnect: false) == .absolute(scheme: .http, host: "0x7f.example", port: 80, target: "/"))
    }

    @Test func ipv6IsCanonicalised() {
        #expect(ClientTarget.parse("http://[0::1]/", isConnect: false) == .absolute(scheme: .http, host: "::1", port: 80, target: "/"))
        #expect(ClientTarget.parse("http://[0:0:0:0:0:0:0:1]:8080/x", isConnect: false) == .absolute(scheme: .http, host: "::1", port: 8080, target: "/x"))
        #expect(ClientTarget.parse("http://[::FFFF:127.0.0.2]/", isConnect: false) == .absolute(scheme: .http, host: "::ffff:127.0.0.2", port: 80, target: "/"))
        #expect(ClientTarget.parse("[0::1]:443", isConnect: true) == .authority(host: "::1", port: 443))
        #expect(ClientTarget.parse("http://[127.0.0.1]/", isConnect: false) == nil, "IPv4 is not written in brackets")
        #expect(ClientTarget.parse("http://[::1::2]/", isConnect: false) == nil)
    }
}
