/// Checks of the `shared_state` section.
extension GatewayConfig {
    func validateSharedState(_ fail: (String, String) -> Void) {
        guard let postgres = sharedState?.postgres else { return }
        let key = "shared_state.postgres"
        if !(1...64).contains(postgres.maxConnections) {
            fail("\(key).max_connections", "must be between 1 and 64, got \(postgres.maxConnections)")
        }
        let durations = [
            ("connect_timeout", postgres.connectTimeout, Duration.milliseconds(10)),
            ("query_timeout", postgres.queryTimeout, Duration.milliseconds(10)),
            ("rate_limit_lease", postgres.rateLimitLease, Duration.milliseconds(1)),
            ("sync_interval", postgres.syncInterval, Duration.milliseconds(10)),
        ]
        for (name, value, minimum) in durations where value < minimum {
            fail("\(key).\(name)", "must be at least \(ConfigUnits.formatDuration(minimum)), got \(ConfigUnits.formatDuration(value))")
        }
        if postgres.syncInterval > .seconds(60) {
            fail("\(key).sync_interval", "must be at most 1m, got \(ConfigUnits.formatDuration(postgres.syncInterval))")
        }
        if let caFile = postgres.caFile {
            if postgres.tls != .verifyFull {
                fail("\(key).ca_file", "only used with tls: verify-full (tls is \(postgres.tls.rawValue))")
            }
            GatewayConfig.checkPath(caFile, key: "\(key).ca_file", fail)
        }
    }
}
