/// A secret value the gateway obtained while running rather than read from
/// its config: an OAuth2 access token (current or recently replaced), a
/// rotated refresh token. `name` is what a redacted trace shows instead of
/// the value (`[REDACTED:PAYMENTS_ACCESS_TOKEN]`), as a shell variable name
/// before sanitizing. Printing one shows its name and length, never its value.
public struct RuntimeSecret: Sendable, Hashable {
    public let value: String
    public let name: String

    public init(value: String, name: String) {
        self.value = value
        self.name = name
    }
}

extension RuntimeSecret: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `<PAYMENTS_ACCESS_TOKEN, 40 bytes>`: the name, never the value.
    public var description: String { "<\(name), \(value.utf8.count) bytes>" }

    public var debugDescription: String { "RuntimeSecret(\(description))" }

    /// Keeps the value out of `dump(_:)` and of default printing.
    public var customMirror: Mirror { Mirror(self, children: ["name": name, "value": "<redacted>"], displayStyle: .struct) }
}
