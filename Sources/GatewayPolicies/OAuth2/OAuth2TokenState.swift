/// An access token as the policies handle it. Printing it (`description`,
/// string interpolation, `dump`) never shows the value.
public struct AccessToken: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    public let value: String

    public init(_ value: String) {
        self.value = value
    }

    /// The `Authorization` header value: `Bearer <token>` (RFC 6750 §2.1).
    public var authorizationValue: String { "Bearer \(value)" }

    public var description: String { "<access token, \(value.utf8.count) bytes>" }
    public var customMirror: Mirror { Mirror(self, children: ["value": "<redacted>"], displayStyle: .struct) }
}

/// What a ``TokenStore`` knows about one credential, as persisted in
/// `state_dir/<upstream>.json`. Times are wall-clock seconds since 1970 (they
/// must survive a restart).
public struct OAuth2TokenState: Sendable, Equatable, Codable {
    /// Format of the state file; bumped only on incompatible changes.
    public static let formatVersion = 1

    public var version: Int
    /// ``CredentialIdentity`` of the configuration that produced this state:
    /// a file written for another client, token URL or initial refresh token is ignored.
    public var identity: String
    public var accessToken: String?
    /// When the access token expires; nil if the endpoint sent no `expires_in`.
    public var expiresAt: Double?
    /// When the access token was obtained.
    public var obtainedAt: Double?
    /// The newest refresh token (rotated ones replace older ones), if any.
    public var refreshToken: String?

    public init(identity: String, accessToken: String? = nil, expiresAt: Double? = nil, obtainedAt: Double? = nil, refreshToken: String? = nil) {
        self.version = Self.formatVersion
        self.identity = identity
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.obtainedAt = obtainedAt
        self.refreshToken = refreshToken
    }

    enum CodingKeys: String, CodingKey {
        case version
        case identity
        case accessToken = "access_token"
        case expiresAt = "expires_at"
        case obtainedAt = "obtained_at"
        case refreshToken = "refresh_token"
    }

    /// True when the access token is missing or its expiry has passed at `now`.
    public func isExpired(now: Double) -> Bool {
        guard accessToken != nil else { return true }
        guard let expiresAt else { return false }
        return now >= expiresAt
    }

    /// True when the token should be replaced at `now`: missing, expired, or within
    /// `margin` of its expiry. The margin is capped at half the token's lifetime,
    /// so a token shorter-lived than `refresh_before_expiry` is not refreshed on every request.
    public func needsRefresh(now: Double, margin: Double) -> Bool {
        guard accessToken != nil else { return true }
        guard let expiresAt else { return false }
        var effective = margin
        if let obtainedAt, expiresAt > obtainedAt {
            effective = min(margin, (expiresAt - obtainedAt) / 2)
        }
        return now >= expiresAt - effective
    }
}
