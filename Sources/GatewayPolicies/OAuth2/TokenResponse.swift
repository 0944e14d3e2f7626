/// What a successful token endpoint call returned (RFC 6749 §5.1).
public struct TokenResponse: Sendable, Equatable {
    public var accessToken: String
    /// Seconds the access token is valid, if the endpoint said.
    public var expiresIn: Double?
    /// A new (rotated) refresh token, if the endpoint sent one.
    public var refreshToken: String?
    public var tokenType: String?

    public init(accessToken: String, expiresIn: Double? = nil, refreshToken: String? = nil, tokenType: String? = nil) {
        self.accessToken = accessToken
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.tokenType = tokenType
    }
}
