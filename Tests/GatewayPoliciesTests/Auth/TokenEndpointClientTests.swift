import Foundation
import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import Logging
import NIOCore
import Testing

/// What goes to the token endpoint, and how its answers are read.
@Suite(.timeLimit(.minutes(1)))
struct TokenEndpointClientTests {
    func client(_ oauth: OAuth2Config, transport: any HTTPRequestSender) -> TokenEndpointClient {
        TokenEndpointClient(upstream: "payments", config: oauth, transport: transport, clock: ManualClock(), logger: Logger(label: "t"))
    }

    @Test func clientSecretBasicFormEncodesBeforeBase64() async throws {
        let authority = OAuthTestAuthority(clientID: "id with:colon", clientSecret: "sec ret&=")
        let oauth = OAuth2Config(
            grant: .clientCredentials, tokenURL: "https://auth.test/oauth/token?tenant=a",
            clientID: Secret(source: .inline, value: "id with:colon"), clientSecret: Secret(source: .inline, value: "sec ret&="),
            scope: "read write", audience: "https://api.test", clientAuthMethod: .clientSecretBasic
        )
        let route = try #require(TokenEndpointRoute(tokenURL: oauth.tokenURL, config: GatewayConfig()))
        #expect(route.target == "/oauth/token?tenant=a")
        #expect(route.port == 443 && route.scheme == .https && route.host == "auth.test")
        let request = try client(oauth, transport: authority.tokenEndpoint).makeRequest(route: route, refreshToken: nil)
        let auth = try #require(request.headers["Authorization"].first)
        let decoded = String(decoding: Data(base64Encoded: String(auth.dropFirst(6)))!, as: UTF8.self)
        #expect(decoded == "id+with%3Acolon:sec+ret%26%3D")
        #expect(request.headers["Content-Type"] == ["application/x-www-form-urlencoded"])
        #expect(request.headers["Host"] == ["auth.test"])

        let response = try await client(oauth, transport: authority.tokenEndpoint).requestToken(route: route, refreshToken: nil)
        #expect(authority.isValid(accessToken: response.accessToken))
        #expect(response.expiresIn == 3600)
        let call = try #require(authority.tokenCalls.first)
        #expect(call.clientAuthentication == "basic")
        #expect(call.form == ["grant_type": "client_credentials", "scope": "read write", "audience": "https://api.test"])
    }

    @Test func clientSecretPostPutsTheCredentialsInTheBody() async throws {
        let authority = OAuthTestAuthority()
        let oauth = OAuth2Config(
            grant: .refreshToken, tokenURL: "http://auth.test/token",
            clientID: Secret(source: .inline, value: authority.clientID), clientSecret: Secret(source: .inline, value: authority.clientSecret!),
            refreshToken: Secret(source: .inline, value: authority.initialRefreshToken), clientAuthMethod: .clientSecretPost
        )
        let route = try #require(TokenEndpointRoute(tokenURL: oauth.tokenURL, config: GatewayConfig()))
        let response = try await client(oauth, transport: authority.tokenEndpoint).requestToken(route: route, refreshToken: authority.initialRefreshToken)
        #expect(response.refreshToken == authority.issuedRefreshTokens.first)
        let call = try #require(authority.tokenCalls.first)
        #expect(call.clientAuthentication == "post")
        #expect(call.form["client_secret"] == authority.clientSecret)
        #expect(call.form["refresh_token"] == authority.initialRefreshToken)
    }

    @Test func tokenHostOfAConfiguredUpstreamUsesItsOriginAndTLS() throws {
        var config = GatewayConfig()
        let tls = UpstreamTLSSettings(caFile: "/tmp/ca.pem")
        config.upstreams = [
            UpstreamConfig(name: "auth", hosts: [HostPattern("*.auth.test")!], origin: UpstreamOrigin("https://localhost:8443"), tls: tls)
        ]
        let route = try #require(TokenEndpointRoute(tokenURL: "https://login.auth.test/oauth/token", config: config))
        #expect(route.host == "localhost" && route.port == 8443 && route.scheme == .https)
        #expect(route.tls == tls)
        #expect(route.upstreamName == "auth")
        #expect(TokenEndpointRoute(tokenURL: "ftp://x/y", config: config) == nil)
        #expect(TokenEndpointRoute(tokenURL: "https://user:pw@x/y", config: config) == nil)
    }

    @Test(arguments: [
        (400, #"{"error":"invalid_grant","error_description":"rt-secret is revoked"}"#, "invalid_grant"),
        (401, #"{"error":"invalid_client"}"#, "invalid_client"),
        (503, "<html>down</html>", "http_503"),
        (400, #"{"error":"bad\ncode <script>"}"#, "http_400"),
        (200, #"{"token_type":"Bearer"}"#, "invalid_token_response"),
        (200, #"{"access_token":"a\r\nInjected: 1"}"#, "invalid_token_response"),
    ])
    func errorsAreShortCodesWithoutTheBody(status: Int, body: String, reason: String) throws {
        let error = #expect(throws: TokenRefreshFailure.self) {
            _ = try TokenEndpointClient.parse(status: status, body: ByteBuffer(string: body), url: "https://auth.test/t")
        }
        #expect(error?.reason == reason)
        #expect(error?.detail.contains("rt-secret") == false)
    }

    @Test func expiresInMayBeAString() throws {
        let r = try TokenEndpointClient.parse(status: 200, body: ByteBuffer(string: #"{"access_token":"abc","expires_in":"120","refresh_token":"r2"}"#), url: "u")
        #expect(r == TokenResponse(accessToken: "abc", expiresIn: 120, refreshToken: "r2"))
    }

    @Test func refreshTokenGrantWithoutARefreshTokenFailsWithoutACall() async throws {
        let authority = OAuthTestAuthority()
        let oauth = OAuth2Config(grant: .refreshToken, tokenURL: "http://auth.test/token", clientID: Secret(source: .inline, value: "id"))
        let route = try #require(TokenEndpointRoute(tokenURL: oauth.tokenURL, config: GatewayConfig()))
        let error = await #expect(throws: TokenRefreshFailure.self) {
            _ = try await client(oauth, transport: authority.tokenEndpoint).requestToken(route: route, refreshToken: nil)
        }
        #expect(error?.reason == "no_refresh_token")
        #expect(authority.tokenCallCount == 0)
    }
}
