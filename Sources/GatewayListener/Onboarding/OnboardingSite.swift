package import GatewayCore
import NIOCore
import NIOHTTP1

/// The pages a phone opens through the proxy to trust the interception CA,
/// at one reserved host name (`gateway.invalid`: RFC 2606's `.invalid` never
/// resolves, so no real site is shadowed), like mitmproxy's `mitm.it`:
///
/// - `/`: the steps for iOS and Android, the CA's SHA-256 fingerprint;
/// - `/ca.pem` (`application/x-pem-file`), `/ca.crt` (DER, `application/x-x509-ca-cert`,
///   what Android's certificate installer takes);
/// - `/gateway.mobileconfig` (`application/x-apple-aspen-config`): an iOS/iPadOS
///   profile with the CA as its root-certificate payload.
///
/// Built once per config load (every byte of every response made then); nil
/// CA when no upstream intercepts (the page says so, the downloads are 404).
package struct OnboardingSite: Sendable {
    package static let host = "gateway.invalid"
    package static let url = "http://gateway.invalid/"

    /// The CA the site offers.
    package struct Authority: Sendable {
        /// The CA certificate, DER.
        package var der: [UInt8]
        package var pem: String
        /// `AB:CD:...` (SHA-256 of the DER).
        package var fingerprint: String
        /// The CA's common name (`Gateway interception CA (host)`).
        package var name: String

        package init(der: [UInt8], pem: String, fingerprint: String, name: String) {
            self.der = der
            self.pem = pem
            self.fingerprint = fingerprint
            self.name = name
        }
    }

    private let responses: [String: ProxyResponse]

    package init(authority: Authority?, proxyAuthRequired: Bool) {
        var responses: [String: ProxyResponse] = [:]
        let page = OnboardingPage.html(authority: authority, proxyAuthRequired: proxyAuthRequired)
        responses["/"] = Self.response(Array(page.utf8), contentType: "text/html; charset=utf-8")
        if let authority {
            responses["/ca.pem"] = Self.response(
                Array(authority.pem.utf8), contentType: "application/x-pem-file", fileName: "gateway-ca.pem")
            responses["/ca.crt"] = Self.response(authority.der, contentType: "application/x-x509-ca-cert", fileName: "gateway-ca.crt")
            responses["/gateway.mobileconfig"] = Self.response(
                Array(MobileConfigProfile.xml(authority: authority).utf8), contentType: "application/x-apple-aspen-config",
                fileName: "gateway.mobileconfig")
        }
        self.responses = responses
    }

    /// The response for `path` (its query ignored); a JSON 404 for any other path.
    package func response(forPath path: String) -> ProxyResponse {
        let bare = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? path
        if let response = responses[bare.isEmpty ? "/" : bare] { return response }
        let message = responses["/ca.pem"] == nil && bare != "/"
            ? "no upstream has intercept: true, so there is no CA to install; see \(Self.url)"
            : "the onboarding site has /, /ca.pem, /ca.crt and /gateway.mobileconfig"
        return GatewayError(.notFound, message).response()
    }

    private static func response(_ bytes: [UInt8], contentType: String, fileName: String? = nil) -> ProxyResponse {
        var headers: HTTPHeaders = [
            "Content-Type": contentType,
            "Content-Length": String(bytes.count),
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        ]
        if let fileName { headers.add(name: "Content-Disposition", value: "attachment; filename=\"\(fileName)\"") }
        return ProxyResponse(status: .ok, headers: headers, body: .bytes(ByteBuffer(bytes: bytes)))
    }
}
