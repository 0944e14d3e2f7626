/// `proxy_auth`: clients must send `Proxy-Authorization: Basic ...` with one
/// of these users. When absent, the proxy listener asks for no credentials
/// (allowed on loopback, or elsewhere only with `open: true`).
public struct ProxyAuthConfig: Sendable, Equatable {
    /// Sent in `Proxy-Authenticate: Basic realm="<realm>"`.
    public var realm: String
    /// Non-empty; usernames are unique and contain no ':'.
    public var users: [ProxyUser]

    public static let defaultRealm = "gateway"

    public init(realm: String = ProxyAuthConfig.defaultRealm, users: [ProxyUser]) {
        self.realm = realm
        self.users = users
    }

    /// The user with these credentials, if any. Compares every user's password
    /// in time independent of where the first mismatching byte is.
    public func authenticate(username: String, password: String) -> ProxyUser? {
        var found: ProxyUser?
        for user in users {
            let nameMatches = constantTimeEquals(user.username, username)
            let passwordMatches = constantTimeEquals(user.password.value, password)
            if nameMatches && passwordMatches && found == nil {
                found = user
            }
        }
        return found
    }
}

/// One `proxy_auth.users` entry.
public struct ProxyUser: Sendable, Equatable {
    public var username: String
    public var password: Secret

    public init(username: String, password: Secret) {
        self.username = username
        self.password = password
    }
}

/// Equality whose running time depends on the lengths only, not on the
/// position of the first differing byte.
func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let lhs = Array(a.utf8)
    let rhs = Array(b.utf8)
    var difference = UInt8(truncatingIfNeeded: lhs.count ^ rhs.count)
    if lhs.count != rhs.count { difference |= 1 }
    for index in 0..<max(lhs.count, rhs.count) {
        let x = index < lhs.count ? lhs[index] : 0
        let y = index < rhs.count ? rhs[index] : 0
        difference |= x ^ y
    }
    return difference == 0
}
