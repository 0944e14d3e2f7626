import GatewayConfig
import GatewayCore
@testable import GatewayListener
import NIOHTTP1
import Testing

/// The first steps of every request as pure values: proxy auth and the access
/// rules (their order is GatewayApp's `ExchangePhases`, tested in GatewayIntegrationTests).
struct AdmissionStepTests {
    static let auth = ProxyAuthConfig(realm: "gw", users: [ProxyUser(username: "u", password: Secret(source: .env("GATEWAY_TEST_PROXY_PASSWORD"), value: "p"))])

    func request(_ target: ClientTarget, method: HTTPMethod = .GET, headers: HTTPHeaders = [:], interception: Bool = false, bodyless: Bool = true) -> AdmissionRequest {
        AdmissionRequest(head: ClientRequestHead(version: .http1_1, method: method, uri: "/", headers: headers), target: target, insideInterception: interception, bodyless: bodyless)
    }

    @Test func aMissingCredentialIsChallengedAndABodylessRequestKeepsTheConnection() {
        let step = ProxyAuthStep(config: Self.auth)
        let target = ClientTarget.absolute(scheme: .http, host: "example.test", port: 80, target: "/")
        guard case .answer(let response, let keepAlive) = step.admit(request(target)) else { Issue.record("expected a 407"); return }
        #expect(response.status == .proxyAuthenticationRequired)
        #expect(keepAlive)
        guard case .answer(_, let withBody) = step.admit(request(target, method: .POST, bodyless: false)) else { Issue.record("expected a 407"); return }
        #expect(!withBody, "its body would follow: the connection closes")
        let good: HTTPHeaders = ["Proxy-Authorization": "Basic dTpw"]
        guard case .proceed = step.admit(request(target, headers: good)) else { Issue.record("u:p is a user"); return }
        guard case .proceed = step.admit(request(target, interception: true)) else { Issue.record("inside interception the CONNECT was authenticated"); return }
    }

    @Test func accessRefusesDeniedHostsAndOtherConnectPorts() {
        var access = AccessConfig()
        access.deny = [HostPattern("blocked.test")!]
        access.connectPorts = [443]
        let step = AccessStep(access: access)
        guard case .refuse(let denied) = step.admit(request(.absolute(scheme: .http, host: "blocked.test", port: 80, target: "/"))) else {
            Issue.record("expected host_not_allowed"); return
        }
        #expect(denied.code == .hostNotAllowed)
        guard case .refuse(let port) = step.admit(request(.authority(host: "ok.test", port: 25), method: .CONNECT)) else {
            Issue.record("expected port_not_allowed"); return
        }
        #expect(port.code == .portNotAllowed)
        guard case .proceed = step.admit(request(.authority(host: "ok.test", port: 443), method: .CONNECT)) else { Issue.record("allowed"); return }
        guard case .proceed = step.admit(request(.origin("/metrics"))) else { Issue.record("origin-form is refused later"); return }
    }
}
