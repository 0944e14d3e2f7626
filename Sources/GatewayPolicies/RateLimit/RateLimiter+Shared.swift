import GatewayCore
import NIOCore

/// A limiter whose bucket the gateway replicas share (`shared_state`): tokens
/// come from leases of the shared bucket (``SharedRateLimits/lease(bucket:rate:burst:want:)``),
/// a few at a time, instead of flowing in locally. While the database does not
/// answer, the limiter works locally (`on_unavailable: local`) or refuses
/// with 503 (`fail`).
extension RateLimiter {
    /// The shared bucket a limiter leases from.
    struct SharedBucket: Sendable {
        let backend: any SharedRateLimits
        /// The bucket's row: the upstream, and the endpoint with `per_endpoint`.
        let key: String
    }

    enum SharedMode: Equatable {
        /// A lone gateway's bucket (no shared state, or the database is down with `local`).
        case local
        /// Tokens leased from the shared bucket.
        case leased
        /// The database is down with `fail`: refuse.
        case refuse
    }

    func sharedMode() -> SharedMode {
        guard let shared else { return .local }
        if shared.backend.isAvailable { return .leased }
        return shared.backend.fallback == .local ? .local : .refuse
    }

    /// The 503 of `fail` mode; the caller names the request's `host:port` as its `upstream`.
    func unavailableError() -> GatewayError {
        SharedStateFallback.unavailableError("cannot take a token of the shared rate limit \(shared?.key ?? "")")
    }

    /// One lease: its tokens go into the bucket; none granted sleeps until the
    /// shared bucket has one. A failed lease waits a moment (the backend marks
    /// itself unavailable, and the pump goes local or refuses).
    func leaseTokens() async {
        guard let shared else { return }
        let rate = parameters.requestsPerSecond
        let burst = parameters.burst
        do {
            let lease = try await shared.backend.lease(bucket: shared.key, rate: rate, burst: burst, want: shared.backend.leaseSize(rate: rate, burst: burst))
            if lease.granted > 0 {
                state.withLockedValue { $0.queue.deposit(lease.granted) }
            } else {
                try? await clock.sleep(until: clock.now + Swift.max(lease.nextTokenIn, .milliseconds(1)), tolerance: nil)
            }
        } catch {
            try? await clock.sleep(until: clock.now + .milliseconds(50), tolerance: nil)
        }
    }

    /// Refuses every waiter with 503 `shared_state_unavailable`.
    func refuseWaiters() {
        let error = unavailableError()
        let waiters = state.withLockedValue { s in s.takeWaiters(s.queue.removeAll()) }
        if waiters.count > 0 { depthChanged(-waiters.count) }
        for promise in waiters.promises { promise.fail(error) }
    }
}
