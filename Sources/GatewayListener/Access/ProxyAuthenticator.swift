import Foundation
import GatewayConfig
import GatewayCore
import NIOHTTP1

/// Checks `Proxy-Authorization: Basic ...` against the configured users.
/// The comparison does not stop at the first differing byte.
struct ProxyAuthenticator {
    let config: ProxyAuthConfig

    func isAuthorized(_ headers: RequestFields) -> Bool {
        guard let value = headers.first(name: "proxy-authorization") else { return false }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Data(base64Encoded: String(parts[1].trimmingCharacters(in: .whitespaces))),
            let text = String(data: decoded, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return false }
        let username = Array(text[..<colon].utf8)
        let password = Array(text[text.index(after: colon)...].utf8)
        var matched = false
        for user in config.users {
            let userOK = Self.constantTimeEquals(Array(user.username.utf8), username)
            let passOK = Self.constantTimeEquals(Array(user.password.value.utf8), password)
            if userOK && passOK { matched = true }
        }
        return matched
    }

    /// The 407 answer with its challenge.
    func challenge() -> ProxyResponse {
        let realm = config.realm.replacingOccurrences(of: "\"", with: "")
        let error = GatewayError(.proxyAuthRequired, "proxy authentication required: send Proxy-Authorization: Basic (curl -x http://user:password@host:port)")
        return error.response(extraHeaders: ["Proxy-Authenticate": "Basic realm=\"\(realm)\", charset=\"UTF-8\""])
    }

    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        let count = max(a.count, b.count)
        for i in 0..<count {
            let x = i < a.count ? a[i] : 0
            let y = i < b.count ? b[i] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}
