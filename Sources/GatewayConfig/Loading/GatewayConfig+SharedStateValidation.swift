/// Checks of the `shared_state` section.
extension GatewayConfig {
    func validateSharedState(_ fail: (String, String) -> ConfigError) throws(ConfigError) {
        guard let postgres = sharedState?.postgres else { return }
        let key = "shared_state.postgres"
        if !(1...64).contains(postgres.maxConnections) {
            throw fail("\(key).max_connections", "must be between 1 and 64, got \(postgres.maxConnections)")
        }
        let durations = [
            ("connect_timeout", postgres.connectTimeout, Duration.milliseconds(10)),
            ("query_timeout", postgres.queryTimeout, Duration.milliseconds(10)),
            ("rate_limit_lease", postgres.rateLimitLease, Duration.milliseconds(1)),
            ("sync_interval", postgres.syncInterval, Duration.milliseconds(10)),
        ]
        for (name, value, minimum) in durations where value < minimum {
            throw fail("\(key).\(name)", "must be at least \(ConfigUnits.formatDuration(minimum)), got \(ConfigUnits.formatDuration(value))")
        }
        if postgres.syncInterval > .seconds(60) {
            throw fail("\(key).sync_interval", "must be at most 1m, got \(ConfigUnits.formatDuration(postgres.syncInterval))")
        }
        if let caFile = postgres.caFile {
            guard postgres.tls == .verifyFull else {
                throw fail("\(key).ca_file", "only used with tls: verify-full (tls is \(postgres.tls.rawValue))")
            }
            try GatewayConfig.checkPath(caFile, key: "\(key).ca_file", fail)
        }
    }
}
