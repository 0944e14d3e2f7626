/// Decoding of `shared_state` (one backend today: `postgres`).
extension SharedStateConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["postgres"])
        guard let postgres = map["postgres"], !postgres.isNull else {
            throw node.error("expected a postgres section (shared_state: {postgres: {url_env: GATEWAY_DATABASE_URL}})")
        }
        self.init(postgres: try PostgresStateConfig(decoding: postgres))
    }
}

extension PostgresStateConfig {
    static let keys = Secret.keys("url") + [
        "tls", "ca_file", "on_unavailable", "connect_timeout", "query_timeout", "max_connections", "rate_limit_lease", "sync_interval",
    ]

    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: PostgresStateConfig.keys)
        let url = try Secret(decodingFrom: node, map, base: "url")
        let endpoint: PostgresURL
        if node.context.secrets == .skip, url.value == Secret.unresolvedPlaceholder {
            endpoint = PostgresURL(host: "unresolved", username: "unresolved")
        } else {
            let urlNode = Secret.keys("url").lazy.compactMap { map[$0] }.first ?? node
            switch PostgresURL.parse(url.value) {
            case .success(let parsed): endpoint = parsed
            case .failure(let problem): throw urlNode.error("not a usable PostgreSQL URL (\(url)): \(problem.message)")
            }
        }
        self.init(url: url, endpoint: endpoint)
        if let value = map["tls"] { tls = try value.choice(PostgresStateConfig.TLSMode.self) }
        if let value = map["ca_file"] { caFile = node.context.resolvePath(try value.nonEmptyString()) }
        if let value = map["on_unavailable"] { onUnavailable = try value.choice(PostgresStateConfig.OnUnavailable.self) }
        if let value = map["connect_timeout"] { connectTimeout = try value.duration() }
        if let value = map["query_timeout"] { queryTimeout = try value.duration() }
        if let value = map["max_connections"] { maxConnections = try value.int() }
        if let value = map["rate_limit_lease"] { rateLimitLease = try value.duration() }
        if let value = map["sync_interval"] { syncInterval = try value.duration() }
    }
}

extension ConfigNode {
    /// One of the raw values of `T`; the error lists them.
    func choice<T: RawRepresentable & CaseIterable>(_ type: T.Type) throws(ConfigError) -> T where T.RawValue == String {
        let text = try string()
        guard let value = T(rawValue: text) else {
            throw error("expected one of: \(T.allCases.map(\.rawValue).joined(separator: ", ")); got '\(text)'")
        }
        return value
    }
}
