/// `upstreams[i].auth`: credentials the gateway adds to requests for that
/// upstream's hosts (and only those), so the client needs none.
public struct AuthConfig: Sendable, Equatable {
    /// Which credential, and its secret.
    public var kind: Kind
    /// What to do with an `Authorization` header the client sent itself.
    public var clientAuth: ClientAuthMode

    /// One of the `type`s; every secret is resolved at load time.
    public enum Kind: Sendable, Equatable {
        /// `type: bearer`: `Authorization: Bearer <token>`.
        case bearer(token: Secret)
        /// `type: header`: `<name>: <value>` (e.g. `X-API-Key`).
        case header(name: String, value: Secret)
        /// `type: basic`: `Authorization: Basic base64(username:password)`.
        case basic(username: String, password: Secret)
        /// `type: query`: `?<parameter>=<value>` added to the target. Valid, but
        /// the loader warns: URLs end up in logs of other systems.
        case query(parameter: String, value: Secret)
        /// `type: oauth2`: an access token obtained (and refreshed) from a token endpoint.
        case oauth2(OAuth2Config)
    }

    public init(kind: Kind, clientAuth: ClientAuthMode = .replace) {
        self.kind = kind
        self.clientAuth = clientAuth
    }

    /// The YAML `type`: bearer, header, basic, query or oauth2.
    public var typeName: String {
        switch kind {
        case .bearer: "bearer"
        case .header: "header"
        case .basic: "basic"
        case .query: "query"
        case .oauth2: "oauth2"
        }
    }

    /// Every secret this credential holds, with the YAML key (without the
    /// `_env`/`_file` suffix) it was read from: `token`, `value`, `password`,
    /// `client_id`, `client_secret`, `refresh_token`. For redaction of traces
    /// (`$NAME` placeholders) and for checks.
    public var secrets: [(key: String, secret: Secret)] {
        switch kind {
        case .bearer(let token): return [("token", token)]
        case .header(_, let value): return [("value", value)]
        case .basic(_, let password): return [("password", password)]
        case .query(_, let value): return [("value", value)]
        case .oauth2(let oauth):
            var list: [(key: String, secret: Secret)] = [("client_id", oauth.clientID)]
            if let secret = oauth.clientSecret { list.append(("client_secret", secret)) }
            if let token = oauth.refreshToken { list.append(("refresh_token", token)) }
            return list
        }
    }
}

/// `auth.client_auth`: the client's own `Authorization` header.
public enum ClientAuthMode: String, Sendable {
    /// Remove it and send the configured credential (the default).
    case replace
    /// Leave the client's `Authorization` header as it is.
    case keep
}
