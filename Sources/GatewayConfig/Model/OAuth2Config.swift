/// `auth` with `type: oauth2`: where and how to obtain access tokens.
public struct OAuth2Config: Sendable, Equatable {
    /// `grant`: refresh_token or client_credentials.
    public var grant: Grant
    /// `token_url`: an absolute http(s) URL (checked by `validate`).
    public var tokenURL: String
    /// `client_id_env` / `client_id_file` / `client_id` (inline is fine: not a secret).
    public var clientID: Secret
    /// `client_secret_*`; nil for a public client (refresh_token grant only).
    public var clientSecret: Secret?
    /// `refresh_token_*`: the initial refresh token, required for the
    /// refresh_token grant. Rotated ones are persisted under `state_dir`.
    public var refreshToken: Secret?
    /// `scope`, sent as is (space-separated).
    public var scope: String?
    /// `audience`, sent as is.
    public var audience: String?
    /// `client_auth_method`: how the client authenticates to the token endpoint.
    public var clientAuthMethod: ClientAuthMethod
    /// `refresh_before_expiry`: refresh this long before the access token expires.
    public var refreshBeforeExpiry: Duration

    public enum Grant: String, Sendable {
        case refreshToken = "refresh_token"
        case clientCredentials = "client_credentials"
    }

    public enum ClientAuthMethod: String, Sendable {
        /// `Authorization: Basic` with client id and secret (RFC 6749 2.3.1).
        case clientSecretBasic = "client_secret_basic"
        /// `client_id` and `client_secret` in the form body.
        case clientSecretPost = "client_secret_post"
    }

    public static let defaultRefreshBeforeExpiry: Duration = .seconds(60)

    public init(
        grant: Grant,
        tokenURL: String,
        clientID: Secret,
        clientSecret: Secret? = nil,
        refreshToken: Secret? = nil,
        scope: String? = nil,
        audience: String? = nil,
        clientAuthMethod: ClientAuthMethod = .clientSecretBasic,
        refreshBeforeExpiry: Duration = OAuth2Config.defaultRefreshBeforeExpiry
    ) {
        self.grant = grant
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.refreshToken = refreshToken
        self.scope = scope
        self.audience = audience
        self.clientAuthMethod = clientAuthMethod
        self.refreshBeforeExpiry = refreshBeforeExpiry
    }
}
