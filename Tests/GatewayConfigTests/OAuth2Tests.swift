import Foundation
import GatewayConfig
import Testing

@Suite("upstreams[].auth: oauth2")
struct OAuth2Tests {
    static let environment = ["CID": "client-1", "CSECRET": "csecret-1", "RTOKEN": "rtoken-1"]

    static func auth(_ body: String) -> String {
        "upstreams:\n  - name: pay\n    hosts: [api.payments.test]\n    auth:\n      type: oauth2\n" + body
    }

    static let refreshGrant = """
              grant: refresh_token
              token_url: https://auth.payments.test/oauth/token
              client_id_env: CID
              client_secret_env: CSECRET
              refresh_token_env: RTOKEN

        """

    static func oauth(_ body: String, environment: [String: String] = OAuth2Tests.environment) -> OAuth2Config? {
        guard case .oauth2(let config) = TestSupport.parse(auth(body), environment: environment)?.upstreams.first?.auth?.kind else {
            return nil
        }
        return config
    }

    @Test func refreshTokenGrantWithDefaults() {
        let config = Self.oauth(Self.refreshGrant)
        #expect(
            config
                == OAuth2Config(
                    grant: .refreshToken,
                    tokenURL: "https://auth.payments.test/oauth/token",
                    clientID: Secret(source: .env("CID"), value: "client-1"),
                    clientSecret: Secret(source: .env("CSECRET"), value: "csecret-1"),
                    refreshToken: Secret(source: .env("RTOKEN"), value: "rtoken-1")
                ))
        #expect(config?.clientAuthMethod == .clientSecretBasic)
        #expect(config?.refreshBeforeExpiry == .seconds(60))
        #expect(config?.scope == nil)
        #expect(config?.audience == nil)
    }

    @Test func everyField() throws {
        let secret = try TestSupport.temporaryFile(named: "client_secret", contents: "from-file\n")
        defer { TestSupport.removeDirectory(of: secret) }
        let config = Self.oauth(
            """
                  grant: client_credentials
                  token_url: "http://127.0.0.1:9999/token?tenant=a"
                  client_id: my-app
                  client_secret_file: \(secret.path)
                  scope: "read write"
                  audience: https://api.example.com
                  client_auth_method: client_secret_post
                  refresh_before_expiry: 2m

            """)
        #expect(
            config
                == OAuth2Config(
                    grant: .clientCredentials,
                    tokenURL: "http://127.0.0.1:9999/token?tenant=a",
                    clientID: Secret(source: .inline, value: "my-app"),
                    clientSecret: Secret(source: .file(secret.path), value: "from-file"),
                    scope: "read write",
                    audience: "https://api.example.com",
                    clientAuthMethod: .clientSecretPost,
                    refreshBeforeExpiry: .seconds(120)
                ))
        #expect(config?.tokenEndpoint?.origin == UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: 9999))
        #expect(config?.tokenEndpoint?.target == "/token?tenant=a")
    }

    @Test func publicClientNeedsNoSecret() {
        let config = Self.oauth(
            "      grant: refresh_token\n      token_url: https://a.test/t\n      client_id: app\n      refresh_token_env: RTOKEN\n")
        #expect(config?.clientSecret == nil)
        #expect(config?.refreshToken?.value == "rtoken-1")
    }

    @Test func requiredKeys() {
        TestSupport.expectError(
            Self.auth("      token_url: https://a.test/t\n      client_id: a\n"), keyPath: "upstreams[0].auth",
            contains: "missing required key 'grant' (one of: refresh_token, client_credentials)")
        TestSupport.expectError(
            Self.auth("      grant: refresh_token\n      client_id: a\n"), keyPath: "upstreams[0].auth",
            contains: "missing required key 'token_url'")
        TestSupport.expectError(
            Self.auth("      grant: refresh_token\n      token_url: https://a.test/t\n      refresh_token: r\n"),
            keyPath: "upstreams[0].auth", contains: "exactly one of client_id_env, client_id_file, client_id is required; found none")
    }

    @Test func grantAndMethodMustBeKnown() {
        TestSupport.expectError(
            Self.auth("      grant: password\n"), keyPath: "upstreams[0].auth.grant",
            contains: "expected one of: refresh_token, client_credentials; got 'password'")
        TestSupport.expectError(
            Self.auth(Self.refreshGrant + "      client_auth_method: private_key_jwt\n"),
            keyPath: "upstreams[0].auth.client_auth_method",
            contains: "expected one of: client_secret_basic, client_secret_post; got 'private_key_jwt'", environment: Self.environment)
    }

    @Test func refreshTokenGrantRequiresARefreshToken() {
        TestSupport.expectError(
            Self.auth("      grant: refresh_token\n      token_url: https://a.test/t\n      client_id: a\n      client_secret: s\n"),
            keyPath: "upstreams[0].auth",
            contains: "grant refresh_token requires one of refresh_token_env, refresh_token_file, refresh_token")
    }

    @Test func clientCredentialsGrantRequiresASecretAndNoRefreshToken() {
        TestSupport.expectError(
            Self.auth("      grant: client_credentials\n      token_url: https://a.test/t\n      client_id: a\n"),
            keyPath: "upstreams[0].auth",
            contains: "grant client_credentials requires one of client_secret_env, client_secret_file, client_secret")
        TestSupport.expectError(
            Self.auth(
                "      grant: client_credentials\n      token_url: https://a.test/t\n      client_id: a\n      client_secret: s\n      refresh_token_env: RTOKEN\n"
            ),
            keyPath: "upstreams[0].auth.refresh_token_env", contains: "applies only to grant refresh_token",
            environment: Self.environment)
    }

    @Test func moreThanOneSourceForAnOptionalSecret() {
        TestSupport.expectError(
            Self.auth(Self.refreshGrant + "      client_secret: inline\n"), keyPath: "upstreams[0].auth",
            contains: "exactly one of client_secret_env, client_secret_file, client_secret is required; found client_secret_env and client_secret",
            environment: Self.environment)
    }

    @Test(arguments: [
        ("auth.payments.test/token", "expected an absolute http(s) URL"),
        ("/oauth/token", "expected an absolute http(s) URL"),
        ("ftp://auth.test/token", "scheme must be http or https"),
        ("https://auth.test/token#x", "fragment"),
        ("https://user:pw-topsecret@auth.test/token", "must not contain credentials"),
        ("https://auth.test:0/token", "from 1 to 65535"),
        ("https://auth.test:99999/token", "from 1 to 65535"),
        ("https:///token", "not a valid host"),
        ("https://bad_host!/token", "not a valid host"),
        ("https://auth.test/a b", "spaces or control characters"),
    ])
    func tokenURLMustBeAnAbsoluteHTTPURL(url: String, fragment: String) {
        let body = Self.refreshGrant.replacingOccurrences(of: "https://auth.payments.test/oauth/token", with: "\"\(url)\"")
        TestSupport.expectError(Self.auth(body), keyPath: "upstreams[0].auth.token_url", contains: fragment, environment: Self.environment)
        #expect(TestSupport.error(of: Self.auth(body), environment: Self.environment)?.description.contains("topsecret") == false)
    }

    @Test(arguments: [
        ("https://auth.test", "/"),
        ("HTTPS://auth.test/oauth/token", "/oauth/token"),
        ("http://[::1]:8080/t", "/t"),
        ("https://auth.test?x=1", "/?x=1"),
    ])
    func tokenEndpointSplitsTheURL(url: String, target: String) {
        let config = OAuth2Config(grant: .clientCredentials, tokenURL: url, clientID: Secret(source: .inline, value: "a"))
        #expect(config.tokenEndpoint?.target == target)
    }

    @Test func scopeAndAudienceMustNotBeEmpty() {
        TestSupport.expectError(
            Self.auth(Self.refreshGrant + "      scope: \"\"\n"), keyPath: "upstreams[0].auth.scope", contains: "must not be empty",
            environment: Self.environment)
        TestSupport.expectError(
            Self.auth(Self.refreshGrant + "      audience: \"a\\nb\"\n"), keyPath: "upstreams[0].auth.audience",
            contains: "control characters", environment: Self.environment)
    }

    @Test func refreshBeforeExpiryMayBeZeroButNotNegative() throws {
        #expect(Self.oauth(Self.refreshGrant + "      refresh_before_expiry: 0s\n")?.refreshBeforeExpiry == .zero)
        var config = try #require(TestSupport.parse(Self.auth(Self.refreshGrant), environment: Self.environment))
        guard case .oauth2(var oauth) = config.upstreams[0].auth?.kind else { return }
        oauth.refreshBeforeExpiry = .seconds(-1)
        config.upstreams[0].auth?.kind = .oauth2(oauth)
        let error = #expect(throws: ConfigError.self) { try config.validate() }
        #expect(error?.keyPath == "upstreams[0].auth.refresh_before_expiry")
    }

    @Test func clientAuthApplies() {
        let auth = TestSupport.parse(Self.auth(Self.refreshGrant + "      client_auth: keep\n"), environment: Self.environment)?
            .upstreams.first?.auth
        #expect(auth?.clientAuth == .keep)
        #expect(auth?.secrets.map(\.key) == ["client_id", "client_secret", "refresh_token"])
    }

    @Test func oauthKeysDoNotApplyToOtherTypes() {
        TestSupport.expectError(
            "upstreams:\n  - name: a\n    hosts: [a.com]\n    auth:\n      type: bearer\n      token: t\n      scope: read\n",
            keyPath: "upstreams[0].auth.scope", contains: "'scope' does not apply to type bearer")
    }
}
