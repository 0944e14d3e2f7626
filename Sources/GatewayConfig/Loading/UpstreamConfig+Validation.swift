/// Checks of an upstream's `endpoints`, `auth`, `retry` and `rate_limit`,
/// run by `GatewayConfig.validate` with the upstream's key path as `prefix`.
/// Messages name secrets by their source only, never by value.
extension UpstreamConfig {
    typealias Fail = (String, String) -> Void

    func validateFeatures(prefix: String, maxEndpoints: Int, _ fail: Fail) {
        validateEndpoints(prefix: "\(prefix).endpoints", maxEndpoints: maxEndpoints, fail)
        if let auth { auth.validate(prefix: "\(prefix).auth", fail) }
        if let retry { retry.validate(prefix: "\(prefix).retry", fail) }
        if let rateLimit { rateLimit.validate(prefix: "\(prefix).rate_limit", fail) }
    }

    private func validateEndpoints(prefix: String, maxEndpoints: Int, _ fail: Fail) {
        if endpoints.count > maxEndpoints {
            fail(prefix, "lists \(endpoints.count) templates, more than metrics.max_endpoints_per_upstream (\(maxEndpoints))")
        }
        var firstIndex: [String: Int] = [:]
        for (index, template) in endpoints.enumerated() {
            let text = template.description
            guard case .success(let parsed) = EndpointTemplate.parse(text), parsed == template else {
                fail("\(prefix)[\(index)]", "not a valid endpoint template: '\(text)'")
                continue
            }
            if let first = firstIndex[text] {
                fail("\(prefix)[\(index)]", "duplicate endpoint '\(text)' (also endpoints[\(first)])")
            } else {
                firstIndex[text] = index
            }
        }
    }
}

extension AuthConfig {
    /// Headers a credential must not be sent in: they frame the message or
    /// belong to one connection.
    static let reservedHeaderNames: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer", "upgrade",
        "proxy-authorization", "proxy-authenticate", "proxy-connection", "via",
    ]

    func validate(prefix: String, _ fail: UpstreamConfig.Fail) {
        switch kind {
        case .bearer(let token):
            AuthConfig.checkHeaderSafe(token, key: "\(prefix).token", fail)
        case .header(let name, let value):
            if name.isEmpty || !name.unicodeScalars.allSatisfy(EndpointTemplate.isTokenCharacter) {
                fail("\(prefix).name", "not a valid header name: letters, digits and !#$%&'*+-.^_`|~ only")
            } else if AuthConfig.reservedHeaderNames.contains(name.lowercased()) {
                fail("\(prefix).name", "\(name) cannot carry a credential: the gateway manages it per connection")
            }
            AuthConfig.checkHeaderSafe(value, key: "\(prefix).value", fail)
        case .basic(let username, let password):
            if username.isEmpty { fail("\(prefix).username", "must not be empty") }
            if username.contains(":") {
                fail("\(prefix).username", "must not contain ':' (Basic auth separates user and password with it)")
            }
            if AuthConfig.hasControlCharacter(username) {
                fail("\(prefix).username", "must not contain control characters")
            }
            AuthConfig.checkHeaderSafe(password, key: "\(prefix).password", fail)
        case .query(let parameter, _):
            if parameter.isEmpty || !parameter.unicodeScalars.allSatisfy(AuthConfig.isUnreserved) {
                fail("\(prefix).param", "must be a non-empty name of letters, digits and - . _ ~")
            }
        case .oauth2(let oauth):
            oauth.validate(prefix: prefix, fail)
        }
    }

    /// A value sent in a header line must not contain CR, LF or other
    /// control characters (it would split or corrupt the request head).
    static func checkHeaderSafe(_ secret: Secret, key: String, _ fail: UpstreamConfig.Fail) {
        guard hasControlCharacter(secret.value) else { return }
        fail(
            key + secret.keySuffix,
            "the secret \(secret) contains a line break or control character, which would corrupt the request header")
    }

    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }

    static func isUnreserved(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", ".", "_", "~": true
        default: false
        }
    }
}

extension OAuth2Config {
    func validate(prefix: String, _ fail: UpstreamConfig.Fail) {
        if case .failure(let problem) = OAuth2Config.parseTokenURL(tokenURL) {
            fail("\(prefix).token_url", problem.message)
        }
        AuthConfig.checkHeaderSafe(clientID, key: "\(prefix).client_id", fail)
        if let clientSecret { AuthConfig.checkHeaderSafe(clientSecret, key: "\(prefix).client_secret", fail) }
        switch grant {
        case .refreshToken:
            if refreshToken == nil {
                fail(
                    prefix,
                    "grant refresh_token requires one of refresh_token_env, refresh_token_file, refresh_token (the initial refresh token)")
            }
        case .clientCredentials:
            if clientSecret == nil {
                fail(prefix, "grant client_credentials requires one of client_secret_env, client_secret_file, client_secret")
            }
            if let refreshToken {
                fail("\(prefix).refresh_token\(refreshToken.keySuffix)", "a refresh token applies only to grant refresh_token")
            }
        }
        for (key, value) in [("scope", scope), ("audience", audience)] {
            guard let value else { continue }
            if value.isEmpty { fail("\(prefix).\(key)", "must not be empty") }
            if AuthConfig.hasControlCharacter(value) { fail("\(prefix).\(key)", "must not contain control characters") }
        }
        if refreshBeforeExpiry < .zero {
            fail("\(prefix).refresh_before_expiry", "must not be negative, got \(ConfigUnits.formatDuration(refreshBeforeExpiry))")
        }
    }
}

extension RetryConfig {
    func validate(prefix: String, _ fail: UpstreamConfig.Fail) {
        if attempts < 1 { fail("\(prefix).attempts", "must be at least 1 (1 means no retries), got \(attempts)") }
        if backoffBase <= .zero {
            fail("\(prefix).backoff.base", "must be greater than 0, got \(ConfigUnits.formatDuration(backoffBase))")
        }
        if backoffMax < backoffBase {
            fail(
                "\(prefix).backoff.max",
                "must be at least backoff.base (\(ConfigUnits.formatDuration(backoffBase))), got \(ConfigUnits.formatDuration(backoffMax))")
        }
        if on.isEmpty {
            fail("\(prefix).on", "must list at least one condition; to turn retries off, remove retry or set attempts: 1")
        }
        for case .status(let code) in on where !RetryCondition.validStatuses.contains(code) {
            fail("\(prefix).on", "status \(code) is not an error status; expected 400 to 599")
        }
        if !budgetPercent.isFinite || !(0...100).contains(budgetPercent) {
            fail("\(prefix).budget.percent", "must be between 0 and 100, got \(ConfigUnits.formatNumber(budgetPercent))")
        }
        if !budgetMinPerSecond.isFinite || budgetMinPerSecond < 0 {
            fail("\(prefix).budget.min_per_second", "must be 0 or more, got \(ConfigUnits.formatNumber(budgetMinPerSecond))")
        }
        if !(0...RetryConfig.maxBufferLimit).contains(bufferLimit) {
            fail("\(prefix).buffer_limit", "must be between 0 and 1GiB, got \(ConfigUnits.formatSize(bufferLimit))")
        }
        for (key, value) in [("per_try_timeout", perTryTimeout), ("deadline", deadline)] {
            if let value, value <= .zero {
                fail("\(prefix).\(key)", "must be greater than 0, got \(ConfigUnits.formatDuration(value))")
            }
        }
        if let perTryTimeout, let deadline, perTryTimeout > deadline {
            fail(
                "\(prefix).per_try_timeout",
                "is longer than deadline (\(ConfigUnits.formatDuration(deadline))), so it never applies; got \(ConfigUnits.formatDuration(perTryTimeout))")
        }
    }
}

extension RateLimitConfig {
    func validate(prefix: String, _ fail: UpstreamConfig.Fail) {
        if let rate = requestsPerSecond, !rate.isFinite || rate <= 0 {
            fail("\(prefix).requests_per_second", "must be greater than 0, got \(ConfigUnits.formatNumber(rate))")
        }
        if burst < 1 { fail("\(prefix).burst", "must be at least 1, got \(burst)") }
        if maxQueue < 0 { fail("\(prefix).max_queue", "must be 0 or more, got \(maxQueue)") }
        if maxWait < .zero {
            fail("\(prefix).max_wait", "must not be negative, got \(ConfigUnits.formatDuration(maxWait))")
        }
    }
}

extension Secret {
    /// `_env`, `_file` or "" (inline): the suffix of the key this secret was read from.
    var keySuffix: String {
        switch source {
        case .env: "_env"
        case .file: "_file"
        case .inline: ""
        }
    }
}
