import GatewayCore
public import GatewayPolicies
import Logging
import PostgresNIO

/// Rate limits the replicas share: token buckets in `gateway_rate_buckets`,
/// leased a few tokens at a time (``PostgresStateConfig/leaseSize(rate:burst:)``),
/// and the pauses upstreams asked for in `gateway_upstream_holds`.
///
/// Overshoot: the bucket in the database never gives out more than one
/// bucket would (`burst` at once, `rate` per second after). A replica holds
/// at most one lease of unspent tokens, so in any window the cluster sends at
/// most `replicas × lease` requests more than a single gateway with that
/// bucket would; with the default lease (100 ms of the rate, at least 1),
/// at 10 requests per second that is one request per replica.
public struct PostgresRateLimits: SharedRateLimits {
    let database: SharedStateDatabase

    public init(database: SharedStateDatabase) {
        self.database = database
    }

    public var fallback: SharedStateFallback {
        database.config.onUnavailable == .fail ? .fail : .local
    }

    public var isAvailable: Bool { database.health.isAvailable }

    public func leaseSize(rate: Double, burst: Int) -> Int {
        database.config.leaseSize(rate: rate, burst: burst)
    }

    public func lease(bucket key: String, rate: Double, burst: Int, want: Int) async throws -> TokenLease {
        let logger = database.logger
        return try await database.withConnection("lease rate-limit tokens") { session in
            let rows = try await session.connection.query(
                "SELECT granted, next_token_s FROM gateway_lease_tokens(\(key), \(rate), \(Double(burst)), \(Int32(clamping: want)))",
                logger: logger
            )
            for try await (granted, next) in rows.decode((Int32, Double).self) {
                return TokenLease(granted: Int(granted), nextTokenIn: .milliseconds(Int64((next * 1000).rounded(.up))))
            }
            return TokenLease(granted: 0, nextTokenIn: .milliseconds(100))
        }
    }

    /// Written in the background (once per pause, however many responses
    /// announce it): the replica that saw the pause holds its own requests at
    /// once; the others read it at their next sync.
    public func publishHold(authority: String, duration: Duration) {
        let database = self.database
        guard database.claimHoldPublication(authority: authority, until: .now + duration) else { return }
        let seconds = duration.seconds
        Task {
            let logger = database.logger
            _ = try? await database.withConnection("publish upstream pause") { session in
                try await session.connection.query(
                    """
                    INSERT INTO gateway_upstream_holds AS h (authority, until)
                    VALUES (\(authority), clock_timestamp() + make_interval(secs => \(seconds)))
                    ON CONFLICT (authority) DO UPDATE SET until = greatest(h.until, excluded.until)
                    """,
                    logger: logger
                )
                return true
            }
        }
    }

    /// The pauses in force now, as time left (by the database's clock, so
    /// replicas' clocks need not agree).
    func currentHolds() async throws -> [(authority: String, remaining: Duration)] {
        let logger = database.logger
        let holds = try await database.withConnection("read upstream pauses") { session in
            var holds: [HoldRow] = []
            let rows = try await session.connection.query(
                "SELECT authority, extract(epoch FROM (until - clock_timestamp()))::double precision FROM gateway_upstream_holds WHERE until > clock_timestamp()",
                logger: logger
            )
            for try await (authority, remaining) in rows.decode((String, Double).self) {
                holds.append(HoldRow(authority: authority, remaining: remaining))
            }
            return holds
        }
        return holds.map { ($0.authority, .milliseconds(Int64(($0.remaining * 1000).rounded(.down)))) }
    }

    /// Drops pauses that ended a while ago, and buckets full for a while
    /// (endpoints no longer called, keys of old configs): a full bucket is what
    /// a missing row starts as. Rows of an older gateway's leases (no
    /// `full_at`) stay until a lease writes one.
    func prune() async throws {
        let logger = database.logger
        _ = try await database.withConnection("prune ended pauses and full buckets") { session in
            try await session.connection.query("DELETE FROM gateway_upstream_holds WHERE until < clock_timestamp() - interval '1 minute'", logger: logger)
            try await session.connection.query("DELETE FROM gateway_rate_buckets WHERE full_at < clock_timestamp() - interval '1 minute'", logger: logger)
            return true
        }
    }
}

struct HoldRow: Sendable {
    let authority: String
    let remaining: Double
}
