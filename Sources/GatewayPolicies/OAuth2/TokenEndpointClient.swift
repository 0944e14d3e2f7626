import Foundation
public import GatewayConfig
public import GatewayCore
public import Logging
public import NIOCore
import NIOHTTP1

/// Calls a token endpoint through the gateway's upstream pool (its TLS, pins and
/// timeouts): a form-encoded POST with the grant, client authentication per
/// `client_auth_method`, then the JSON answer parsed. Every failure becomes a
/// ``TokenRefreshFailure``; nothing it logs or throws contains a secret.
public struct TokenEndpointClient: Sendable {
    public static let maxResponseBytes = 64 * 1024
    public static let defaultTimeout: Duration = .seconds(30)

    public let upstream: String
    public let config: OAuth2Config
    public let transport: any HTTPRequestSender
    public let clock: any PolicyClock
    public let timeout: Duration
    public let logger: Logger

    public init(
        upstream: String,
        config: OAuth2Config,
        transport: any HTTPRequestSender,
        clock: any PolicyClock = SystemPolicyClock(),
        timeout: Duration = TokenEndpointClient.defaultTimeout,
        logger: Logger
    ) {
        self.upstream = upstream
        self.config = config
        self.transport = transport
        self.clock = clock
        self.timeout = timeout
        self.logger = logger
    }

    /// One token call. `refreshToken` is required for the refresh_token grant.
    public func requestToken(route: TokenEndpointRoute, refreshToken: String?) async throws(TokenRefreshFailure) -> TokenResponse {
        let request = try makeRequest(route: route, refreshToken: refreshToken)
        let clock = self.clock
        let timeout = self.timeout
        // Unstructured on purpose: the deadline holds even if the transport
        // ignores cancellation (a task group would wait for it).
        let outcome = OneShotValue<TokenResponse>()
        let work = Task {
            do { outcome.succeed(try await self.exchange(request, route: route)) } catch { outcome.fail(error) }
        }
        let timer = Task {
            try? await clock.sleep(for: timeout)
            if !Task.isCancelled { outcome.fail(TokenRefreshFailure.timeout) }
        }
        defer {
            work.cancel()
            timer.cancel()
        }
        do {
            return try await outcome.wait()
        } catch let failure as TokenRefreshFailure {
            throw failure
        } catch {
            throw TokenRefreshFailure(reason: "internal_error", detail: "the token call failed unexpectedly")
        }
    }

    /// The POST to the token endpoint.
    public func makeRequest(route: TokenEndpointRoute, refreshToken: String?) throws(TokenRefreshFailure) -> ProxyRequest {
        var form: [(String, String)] = [("grant_type", config.grant.rawValue)]
        if config.grant == .refreshToken {
            guard let refreshToken, !refreshToken.isEmpty else {
                throw TokenRefreshFailure(reason: "no_refresh_token", detail: "no refresh token is configured or stored")
            }
            form.append(("refresh_token", refreshToken))
        }
        if let scope = config.scope { form.append(("scope", scope)) }
        if let audience = config.audience { form.append(("audience", audience)) }

        var headers: HTTPHeaders = [
            "Host": route.authority,
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        ]
        switch (config.clientAuthMethod, config.clientSecret) {
        case (.clientSecretBasic, let secret?):
            // RFC 6749 §2.3.1: both parts form-encoded before base64.
            let pair = PercentEncoding.formEncode(config.clientID.value) + ":" + PercentEncoding.formEncode(secret.value)
            headers.add(name: "Authorization", value: "Basic " + Data(pair.utf8).base64EncodedString())
        case (.clientSecretPost, let secret?):
            form.append(("client_id", config.clientID.value))
            form.append(("client_secret", secret.value))
        case (_, nil):
            // A public client identifies itself in the body.
            form.append(("client_id", config.clientID.value))
        }
        let body = ByteBuffer(string: PercentEncoding.form(form))
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        return ProxyRequest(
            method: .POST, scheme: route.scheme, host: route.host, port: route.port, target: route.target,
            headers: RequestFields(headers), body: .bytes(body), upstreamName: route.upstreamName, tls: route.tls
        )
    }

    private func exchange(_ request: ProxyRequest, route: TokenEndpointRoute) async throws -> TokenResponse {
        let context = RequestContext(id: "token-\(upstream)", clientAddress: "gateway", logger: logger)
        let response: ProxyResponse
        do {
            response = try await transport.handle(request, context: context)
        } catch let error as GatewayError {
            throw TokenRefreshFailure(reason: error.code.rawValue, detail: "the token endpoint \(route.displayURL) could not be reached (\(error.code.rawValue))")
        }
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: Self.maxResponseBytes)
        } catch let error as GatewayError {
            throw TokenRefreshFailure(reason: error.code.rawValue, detail: "the token endpoint's answer could not be read (\(error.code.rawValue))")
        }
        let status = Int(response.status.code)
        logger.debug("token endpoint answered", metadata: ["upstream": "\(upstream)", "token_url": "\(route.displayURL)", "status": "\(status)"])
        return try Self.parse(status: status, body: body, url: route.displayURL)
    }

    /// Parses the token endpoint's answer: 200 with `access_token`, or an error.
    public static func parse(status: Int, body: ByteBuffer, url: String) throws(TokenRefreshFailure) -> TokenResponse {
        let json = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any]
        guard status == 200 else {
            if let code = TokenRefreshFailure.endpointErrorCode(json?["error"]) {
                throw TokenRefreshFailure(reason: code, detail: "the token endpoint answered \(status) \(code)")
            }
            throw TokenRefreshFailure(reason: "http_\(status)", detail: "the token endpoint answered \(status)")
        }
        guard let json, let access = json["access_token"] as? String, isHeaderSafe(access) else {
            throw TokenRefreshFailure(reason: "invalid_token_response", detail: "the token endpoint's answer has no usable access_token")
        }
        var result = TokenResponse(accessToken: access)
        switch json["expires_in"] {
        case let number as NSNumber: result.expiresIn = number.doubleValue
        case let text as String: result.expiresIn = Double(text)
        default: break
        }
        if let expiresIn = result.expiresIn, !(expiresIn.isFinite && expiresIn >= 0) { result.expiresIn = nil }
        if let refresh = json["refresh_token"] as? String, !refresh.isEmpty {
            guard isHeaderSafe(refresh) else {
                throw TokenRefreshFailure(reason: "invalid_token_response", detail: "the token endpoint sent an unusable refresh_token")
            }
            result.refreshToken = refresh
        }
        result.tokenType = json["token_type"] as? String
        return result
    }

    /// Visible ASCII only: the token goes into a header line.
    static func isHeaderSafe(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }
}
