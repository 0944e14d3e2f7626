public import GatewayConfig

/// Which credential a token state belongs to: the grant, token URL, client id,
/// scope, audience and the configured (initial) refresh token, hashed.
///
/// Stored in the state file so a file written for another configuration is
/// ignored: a user who replaces a revoked refresh token in the config gets the
/// new one used, not the stale rotated one on disk. The hash is FNV-1a (64 bit),
/// a change detector, not a secret-keeping device: the state file holds the
/// live refresh token anyway and is readable by its owner only.
public enum CredentialIdentity {
    public static func of(_ config: OAuth2Config) -> String {
        let fields = [
            "v1",
            config.grant.rawValue,
            config.tokenURL,
            config.clientID.value,
            config.scope ?? "",
            config.audience ?? "",
            config.refreshToken?.value ?? "",
        ]
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for field in fields {
            // Length-prefixed so ("ab","c") and ("a","bc") differ.
            for byte in String(field.utf8.count).utf8 + [0x3A] + Array(field.utf8) {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        let hex = String(hash, radix: 16)
        return "fnv1a64:" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
