@testable import GatewayObservability
import NIOHTTP1
import Testing

/// Which `Host` fields and methods the admin listener answers (DNS rebinding, 405).
@Suite("Admin request policy")
struct AdminRequestPolicyTests {
    static let loopbackBound = AdminRequestPolicy(bindHost: "127.0.0.1", allowedHosts: [])

    @Test(arguments: [
        "localhost", "localhost:9090", "LOCALHOST:9090", "127.0.0.1", "127.0.0.1:9090", "[::1]", "[::1]:9090",
        "[0:0::1]:9090", "[::ffff:127.0.0.1]", "localhost:",
    ])
    func loopbackNamesAreAnswered(host: String) {
        #expect(Self.loopbackBound.allows(host: host, localAddress: "127.0.0.1"))
        #expect(Self.loopbackBound.refusal(method: "GET", hostFields: [host], localAddress: "127.0.0.1") == nil)
    }

    @Test(arguments: [
        "attacker.example", "attacker.example:9090", "localhost.attacker.example", "127.0.0.1.nip.io", "127.1",
        "2130706433", "::1", "[::1", "localhost:port", "localhost:123456", "", ":9090", "0.0.0.0",
    ])
    func otherHostsGet421(host: String) {
        #expect(!Self.loopbackBound.allows(host: host, localAddress: "127.0.0.1"))
        #expect(Self.loopbackBound.refusal(method: "GET", hostFields: [host], localAddress: "127.0.0.1")?.status == 421)
    }

    /// Listening on every address: the address the client reached is its own; other addresses are not.
    @Test func theReachedAddressIsAnsweredOnAWildcardListener() {
        let policy = AdminRequestPolicy(bindHost: "0.0.0.0", allowedHosts: [])
        #expect(policy.allows(host: "10.0.0.5:9090", localAddress: "10.0.0.5"))
        #expect(policy.allows(host: "10.0.0.5", localAddress: "::ffff:10.0.0.5"))
        #expect(!policy.allows(host: "10.0.0.6:9090", localAddress: "10.0.0.5"))
        #expect(!policy.allows(host: "0.0.0.0:9090", localAddress: "10.0.0.5"))
        #expect(!policy.allows(host: "gateway-1:9090", localAddress: "10.0.0.5"))
    }

    @Test func theBoundHostAndConfiguredNamesAreAnswered() {
        let policy = AdminRequestPolicy(bindHost: "192.168.1.10", allowedHosts: ["gateway-1", "Metrics.Internal", "[fd00::5]"])
        #expect(policy.allows(host: "192.168.1.10:9090", localAddress: nil))
        #expect(policy.allows(host: "GATEWAY-1:9090", localAddress: nil))
        #expect(policy.allows(host: "metrics.internal", localAddress: nil))
        #expect(policy.allows(host: "[fd00:0::5]:9090", localAddress: nil))
        #expect(!policy.allows(host: "gateway-2:9090", localAddress: nil))
    }

    @Test func aMissingHostIsAnsweredButTwoAreNot() {
        #expect(Self.loopbackBound.refusal(method: "GET", hostFields: [], localAddress: nil) == nil)
        #expect(Self.loopbackBound.refusal(method: "GET", hostFields: ["localhost", "localhost"], localAddress: nil)?.status == 421)
    }

    @Test func onlyGETAndHEADAreAnswered() {
        #expect(Self.loopbackBound.refusal(method: "HEAD", hostFields: ["localhost"], localAddress: nil) == nil)
        for method in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT", "get"] {
            let refusal = Self.loopbackBound.refusal(method: method, hostFields: ["localhost"], localAddress: nil)
            #expect(refusal?.status == 405, "\(method)")
            #expect(refusal?.allow == "GET, HEAD")
        }
        // A foreign Host is refused first, whatever the method.
        #expect(Self.loopbackBound.refusal(method: "POST", hostFields: ["attacker.example"], localAddress: nil)?.status == 421)
    }

    @Test func refusalBodiesAreShortJSONErrors() {
        #expect(String(decoding: AdminRefusal.misdirected.body, as: UTF8.self).hasPrefix(#"{"error":"misdirected_request","message":"#))
        #expect(String(decoding: AdminRefusal.methodNotAllowed.body, as: UTF8.self).hasPrefix(#"{"error":"method_not_allowed","message":"#))
    }
}

extension AdminRequestPolicyTests {
    /// POST reaches only the injection switch, and only from a script.
    @Test func postReachesOnlyTheSwitchAndOnlyFromAScript() {
        let policy = Self.loopbackBound
        let scripted = AdminRequest(method: "POST", path: "/injection/faults/off", isScripted: true)
        #expect(policy.refusal(scripted, hostFields: ["localhost"], localAddress: nil) == nil)
        var page = scripted
        page.isScripted = false
        #expect(policy.refusal(page, hostFields: ["localhost"], localAddress: nil)?.status == 403)
        #expect(policy.refusal(AdminRequest(method: "POST", path: "/stats", isScripted: true), hostFields: ["localhost"], localAddress: nil)?.status == 405)
        #expect(policy.refusal(AdminRequest(method: "PUT", path: "/injection/faults/off", isScripted: true), hostFields: ["localhost"], localAddress: nil)?.status == 405)
    }

    @Test func theRequestReadsItsQueryAndWhetherAScriptSentIt() {
        var headers = HTTPHeaders([("X-Gateway-Admin-Action", "1")])
        let request = AdminRequest(HTTPRequestHead(version: .http1_1, method: .POST, uri: "/injection/faults/on?upstream=my%20api&x", headers: headers))
        #expect(request.path == "/injection/faults/on")
        #expect(request.queryValue("upstream") == "my api")
        #expect(request.queryValue("x") == "")
        #expect(request.queryValue("y") == nil)
        #expect(request.isScripted)
        headers.add(name: "Origin", value: "http://localhost:9090")
        #expect(!AdminRequest(HTTPRequestHead(version: .http1_1, method: .POST, uri: "/", headers: headers)).isScripted)
    }
}
