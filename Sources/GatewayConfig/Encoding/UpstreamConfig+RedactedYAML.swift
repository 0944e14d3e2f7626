/// The `upstreams` entries of `redactedYAML()`: every secret shows its
/// variable name or file path, or `<redacted>` when written inline.
extension UpstreamConfig {
    func write(to out: inout YAMLLines) {
        out.scalar("name", name)
        out.list("hosts", hosts.map(\.description))
        if let origin { out.scalar("origin", origin.description) }
        if let ports { out.flow("ports", ports.map(String.init)) }
        if !endpoints.isEmpty { out.list("endpoints", endpoints.map(\.description)) }
        out.plain("intercept", String(intercept))
        out.plain("http_version", httpVersion.rawValue)
        // A plain-http origin never uses TLS, and the loader refuses a tls section there.
        if !(origin?.scheme == .http && tls == .standard) {
            out.key("tls")
            out.indented { out in tls.write(to: &out, withPinMode: true) }
        }
        if let auth {
            out.key("auth")
            out.indented { out in auth.write(to: &out) }
        }
        if let retry {
            out.key("retry")
            out.indented { out in retry.write(to: &out) }
        }
        if let rateLimit {
            out.key("rate_limit")
            out.indented { out in rateLimit.write(to: &out) }
        }
        writeInjection(to: &out)
    }
}

extension AuthConfig {
    fileprivate func write(to out: inout YAMLLines) {
        out.plain("type", typeName)
        switch kind {
        case .bearer(let token):
            out.secret("token", token)
        case .header(let name, let value):
            out.scalar("name", name)
            out.secret("value", value)
        case .basic(let username, let password):
            out.scalar("username", username)
            out.secret("password", password)
        case .query(let parameter, let value):
            out.scalar("param", parameter)
            out.secret("value", value)
        case .oauth2(let oauth):
            oauth.write(to: &out)
        }
        out.plain("client_auth", clientAuth.rawValue)
    }
}

extension OAuth2Config {
    fileprivate func write(to out: inout YAMLLines) {
        out.plain("grant", grant.rawValue)
        // The URL could carry a secret in its query: the loader accepts it,
        // so show only scheme, host and path.
        out.scalar("token_url", OAuth2Config.displayURL(tokenURL))
        if case .inline = clientID.source {
            out.scalar("client_id", clientID.value)  // an identifier, not a secret
        } else {
            out.secret("client_id", clientID)
        }
        if let clientSecret { out.secret("client_secret", clientSecret) }
        if let refreshToken { out.secret("refresh_token", refreshToken) }
        if let scope { out.scalar("scope", scope) }
        if let audience { out.scalar("audience", audience) }
        out.plain("client_auth_method", clientAuthMethod.rawValue)
        out.plain("refresh_before_expiry", ConfigUnits.formatDuration(refreshBeforeExpiry))
    }

    /// The URL with any query replaced by `?<redacted>`.
    static func displayURL(_ url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        return url[..<question] + "?<redacted>"
    }
}

extension RetryConfig {
    fileprivate func write(to out: inout YAMLLines) {
        out.plain("attempts", String(attempts))
        out.key("backoff")
        out.indented { out in
            out.plain("base", ConfigUnits.formatDuration(backoffBase))
            out.plain("max", ConfigUnits.formatDuration(backoffMax))
        }
        out.flow("on", on.sorted().map(\.description))
        out.key("budget")
        out.indented { out in
            out.plain("percent", ConfigUnits.formatNumber(budgetPercent))
            out.plain("min_per_second", ConfigUnits.formatNumber(budgetMinPerSecond))
        }
        out.plain("buffer_limit", ConfigUnits.formatSize(bufferLimit))
        if let perTryTimeout { out.plain("per_try_timeout", ConfigUnits.formatDuration(perTryTimeout)) }
        if let deadline { out.plain("deadline", ConfigUnits.formatDuration(deadline)) }
        out.plain("retry_non_idempotent", String(retryNonIdempotent))
    }
}

extension RateLimitConfig {
    fileprivate func write(to out: inout YAMLLines) {
        if let requestsPerSecond {
            out.plain("requests_per_second", ConfigUnits.formatNumber(requestsPerSecond))
            out.plain("burst", String(burst))
        }
        out.plain("max_queue", String(maxQueue))
        out.plain("max_wait", ConfigUnits.formatDuration(maxWait))
        out.plain("honor_upstream", String(honorUpstream))
        out.plain("per_endpoint", String(perEndpoint))
    }
}

extension YAMLLines {
    /// `<base>_env: NAME`, `<base>_file: PATH` (value redacted) or `<base>: <redacted>`.
    mutating func secret(_ base: String, _ secret: Secret) {
        switch secret.source {
        case .env(let name): scalar("\(base)_env", name, comment: "value <redacted>")
        case .file(let path): scalar("\(base)_file", path, comment: "value <redacted>")
        case .inline: scalar(base, "<redacted>")
        }
    }
}
