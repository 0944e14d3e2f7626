public import GatewayConfig

extension AdminServer {
    /// What the admin listener accepts besides its routes: the `Host` names it
    /// answers (``AdminRequestPolicy``), its timeouts (``AdminTimeoutHandler``)
    /// and how many connections it keeps open at once.
    public struct Options: Sendable {
        /// `listen.admin_hosts`: `Host` names answered besides the listener's
        /// own address, `localhost`, `127.0.0.1` and `[::1]`.
        public var allowedHosts: [String]
        /// `limits.header_timeout`: from a request's first byte, all of it must arrive within this (else 408).
        public var headerTimeout: Duration
        /// `limits.idle_timeout`: a connection with no request for this long is closed.
        public var idleTimeout: Duration
        /// Open admin connections at most; new ones beyond are closed at once.
        public var maxConnections: Int

        /// Enough for a few scrapers, browsers and `gateway stats`; small next to any descriptor limit.
        public static let defaultMaxConnections = 64

        public init(
            allowedHosts: [String] = [],
            headerTimeout: Duration = ListenerLimits().headerTimeout,
            idleTimeout: Duration = ListenerLimits().idleTimeout,
            maxConnections: Int = Options.defaultMaxConnections
        ) {
            self.allowedHosts = allowedHosts
            self.headerTimeout = headerTimeout
            self.idleTimeout = idleTimeout
            self.maxConnections = maxConnections
        }

        /// The options a config asks for: `listen.admin_hosts`, and the
        /// client listener's `limits.header_timeout` and `limits.idle_timeout`.
        public init(config: GatewayConfig) {
            self.init(
                allowedHosts: config.listen.adminHosts,
                headerTimeout: config.limits.headerTimeout,
                idleTimeout: config.limits.idleTimeout
            )
        }
    }
}
