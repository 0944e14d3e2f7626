import GatewayConfig
import GatewayCore

/// Runs one upstream attempt under its per-try timeout and the request's
/// deadline, whichever ends first; the attempt is cancelled (its connection
/// closed) when a limit ends it. A response that races in after the limit is
/// discarded, never leaked.
enum AttemptRunner {
    private enum Outcome: Sendable {
        case response(ProxyResponse)
        case perTryTimeout
        case deadline
    }

    static func run(
        perTryTimeout: Duration?,
        deadline: ContinuousClock.Instant?,
        clock: any PolicyClock,
        upstream: String,
        operation: @escaping @Sendable () async throws -> ProxyResponse
    ) async throws -> ProxyResponse {
        guard perTryTimeout != nil || deadline != nil else { return try await operation() }
        let timer = perTryTimeout.map { AttemptTimer(limit: $0, clock: clock) }
        return try await AttemptTimer.$current.withValue(timer) {
            try await withThrowingTaskGroup(of: Outcome.self) { group in
                group.addTask { .response(try await operation()) }
                if let timer {
                    group.addTask {
                        try await timer.run()
                        return .perTryTimeout
                    }
                }
                if let deadline {
                    group.addTask {
                        try await clock.sleep(until: deadline, tolerance: nil)
                        return .deadline
                    }
                }
                let first: Outcome
                do {
                    first = try await group.next()!
                } catch {
                    await drain(&group)
                    throw error
                }
                await drain(&group)
                switch first {
                case .response(let response):
                    return response
                case .perTryTimeout:
                    let limit = perTryTimeout.map(ConfigUnits.formatDuration) ?? "?"
                    throw GatewayError(.requestTimeout, "no response from the upstream within per_try_timeout (\(limit))", upstream: upstream)
                case .deadline:
                    throw GatewayError(.requestTimeout, "the request's deadline passed before the upstream answered", upstream: upstream)
                }
            }
        }
    }

    /// Cancels the other children and waits for them, discarding a late response.
    private static func drain(_ group: inout ThrowingTaskGroup<Outcome, any Error>) async {
        group.cancelAll()
        while !group.isEmpty {
            if case .response(let late)? = try? await group.next() {
                late.body.discard()
            }
        }
    }
}
