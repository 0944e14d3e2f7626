#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GatewayConfig
import Logging

/// The process's open-descriptor limit (`RLIMIT_NOFILE`). Each client
/// connection that tunnels or has a request in flight holds two descriptors
/// (the client's and the upstream's), and the usual soft limit is 1,024: at
/// start the soft limit is raised to the hard one, and a cap the limit cannot
/// carry is reported (with what to do about it).
enum DescriptorLimit {
    /// Descriptors kept aside, in the cap suggested, for the listeners, idle
    /// pooled connections, files and the database.
    static let reserve = 256

    /// Raises the soft limit to the hard limit; returns the soft limit in force
    /// afterwards and the hard limit, or nil when they cannot be read.
    static func raiseSoftLimit() -> (soft: Int, hard: Int)? {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return nil }
        // The kernel refuses an infinite NOFILE limit: stop at a large finite one.
        let target = limit.rlim_max == rlim_t.max ? rlim_t(1 << 20) : limit.rlim_max
        if limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return (Int(clamping: limit.rlim_cur), Int(clamping: limit.rlim_max))
    }

    /// How many descriptors `limits` may need at most: a client and an upstream for each connection.
    static func needed(by limits: ListenerLimits) -> Int {
        2 * limits.maxClientConnections
    }

    /// Raises the limit and logs it; warns when `limits.max_client_connections` needs more.
    static func prepare(for limits: ListenerLimits, logger: Logger) {
        guard let (soft, hard) = raiseSoftLimit() else {
            logger.warning("could not read the open-file limit (RLIMIT_NOFILE)")
            return
        }
        let needed = needed(by: limits)
        guard needed > soft else {
            logger.debug("open-file limit", metadata: ["soft": "\(soft)", "hard": "\(hard)"])
            return
        }
        let fits = max(1, (soft - reserve) / 2)
        logger.warning(
            "the open-file limit (\(soft)) is below what limits.max_client_connections (\(limits.maxClientConnections)) may need (\(needed): a client and an upstream descriptor each); raise it (ulimit -n, docker run --ulimit nofile=N:N) or set max_client_connections to \(fits) or less",
            metadata: ["soft": "\(soft)", "hard": "\(hard)", "needed": "\(needed)"]
        )
    }
}
