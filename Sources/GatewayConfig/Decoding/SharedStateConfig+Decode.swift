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
        let url = Secret.required(from: map, base: "url")
        // A URL not read (not set, or not to be read) stands in as a placeholder.
        var endpoint = PostgresURL(host: "unresolved", username: "unresolved")
        if url.value != Secret.unresolvedPlaceholder {
            let urlNode = Secret.keys("url").lazy.compactMap { map[$0] }.first ?? node
            switch PostgresURL.parse(url.value) {
            case .success(let parsed): endpoint = parsed
            case .failure(let problem): node.context.issues.reject(urlNode.error("not a usable PostgreSQL URL (\(url)): \(problem.message)"))
            }
        }
        self.init(url: url, endpoint: endpoint)
        map.decode("tls", into: &tls) { try $0.choice(PostgresStateConfig.TLSMode.self) }
        map.decode("ca_file", into: &caFile) { node throws(ConfigError) in node.context.resolvePath(try node.nonEmptyString()) }
        map.decode("on_unavailable", into: &onUnavailable) { try $0.choice(PostgresStateConfig.OnUnavailable.self) }
        map.decode("connect_timeout", into: &connectTimeout) { try $0.duration() }
        map.decode("query_timeout", into: &queryTimeout) { try $0.duration() }
        map.decode("max_connections", into: &maxConnections) { try $0.int() }
        map.decode("rate_limit_lease", into: &rateLimitLease) { try $0.duration() }
        map.decode("sync_interval", into: &syncInterval) { try $0.duration() }
    }
}
