import Foundation
public import GatewayConfig
public import GatewayCore
import NIOHTTP1

/// A `bearer`, `header`, `basic` or `query` credential, rendered once from
/// config, and how it is put on a request.
///
/// The credential fills one slot: `Authorization` (bearer, basic), the
/// configured header, or the configured query parameter. `client_auth: replace`
/// (the default): whatever the client put in that slot is replaced, the gateway
/// owns this upstream's credential there; everything else the client sent stays
/// (an API key header next to the user's own `Authorization` reaches the
/// upstream as both). `client_auth: keep`: a request that fills the slot itself
/// is left untouched; one that does not gets the configured credential.
public struct StaticCredential: Sendable {
    enum Placement: Sendable {
        case header(name: String, value: String)
        /// Parameter name and the already percent-encoded `name=value` pair.
        case query(name: String, pair: String)
    }

    let placement: Placement
    let clientAuth: ClientAuthMode

    /// Nil for `oauth2` (handled by ``TokenRefreshPolicy``).
    public init?(_ auth: AuthConfig) {
        clientAuth = auth.clientAuth
        switch auth.kind {
        case .bearer(let token):
            placement = .header(name: "Authorization", value: "Bearer \(token.value)")
        case .header(let name, let value):
            placement = .header(name: name, value: value.value)
        case .basic(let username, let password):
            let encoded = Data("\(username):\(password.value)".utf8).base64EncodedString()
            placement = .header(name: "Authorization", value: "Basic \(encoded)")
        case .query(let parameter, let value):
            placement = .query(name: parameter, pair: PercentEncoding.encode(parameter) + "=" + PercentEncoding.encode(value.value))
        case .oauth2:
            return nil
        }
    }

    /// Adds the credential to `request` (see the type's documentation).
    public func apply(to request: inout ProxyRequest) {
        if clientAuth == .keep, clientSentCredential(request) { return }
        switch placement {
        case .header(let name, let value):
            request.headers.replaceOrAdd(name: name, value: value)
        case .query(let name, let pair):
            request.target = QueryEditing.replacing(parameter: name, with: pair, in: request.target)
        }
    }

    func clientSentCredential(_ request: ProxyRequest) -> Bool {
        switch placement {
        case .header(let name, _):
            return request.headers.contains(name: name)
        case .query(let name, _):
            return QueryEditing.contains(parameter: name, in: request.target)
        }
    }
}
