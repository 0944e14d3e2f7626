import GatewayCore
import NIOCore
import NIOHTTP1

/// Serves the onboarding site (``OnboardingSite``) to the proxy's own clients:
/// `http://gateway.invalid/` asked through the proxy answers here, never on the
/// network. An admission step after proxy authentication (so a client that has
/// not authenticated gets the 407 first) and before the access rules (the site
/// is the gateway's own, whatever hosts `access` allows). Every other request
/// passes with one comparison of the host's length.
package struct OnboardingStep: AdmissionStep {
    let site: OnboardingSite

    package init(site: OnboardingSite) {
        self.site = site
    }

    package func admit(_ request: AdmissionRequest) -> Admission {
        guard case .absolute(.http, let host, let port, let path) = request.target, port == 80,
            host.utf8.count == OnboardingSite.host.utf8.count, host.lowercased() == OnboardingSite.host,
            !request.insideInterception
        else { return .proceed }
        let method = request.head.method
        guard method == .GET || method == .HEAD else {
            return .refuse(GatewayError(.unsupportedTarget, "the onboarding site \(OnboardingSite.url) answers GET and HEAD only"))
        }
        var response = site.response(forPath: path)
        if method == .HEAD { response.body = .empty }
        return .answer(response, keepAlive: request.bodyless)
    }
}
