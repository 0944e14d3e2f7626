/// A secret value the gateway obtained while running rather than read from
/// its config: an OAuth2 access token (current or recently replaced), a
/// rotated refresh token. `name` is what a redacted trace shows instead of
/// the value (`[REDACTED:PAYMENTS_ACCESS_TOKEN]`), as a shell variable name
/// before sanitizing.
public struct RuntimeSecret: Sendable, Hashable {
    public let value: String
    public let name: String

    public init(value: String, name: String) {
        self.value = value
        self.name = name
    }
}
