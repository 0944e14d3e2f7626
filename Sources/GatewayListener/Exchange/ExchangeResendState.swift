import GatewayCore
import NIOCore

/// What another attempt of an exchange may send, and whether it goes: the
/// retry state (``RetryRun``), the copy of a body that may be sent again
/// (``RequestReplayBuffer``), whether a step replayed the request already. A
/// pure value kept by ``ExchangeStateMachine``, which turns its verdicts into
/// phases and actions.
///
/// What may be sent again: a retry needs the body within `buffer_limit`
/// (``RetryRun/bodyLimit``); a step's replay needs it within the copy's limit
/// (the larger of the two). A response is turned down only if the body is,
/// or will surely be, all in its copy (it is complete, or its declared length
/// fits); a failed attempt, which has no response to give instead, may also
/// wait for a chunked body, and if that outgrows the limit its failure is the
/// client's answer (the retry is decided, and taken from the budget, only once
/// the body is all in its copy). A later attempt sends the copy in one write,
/// once the client's whole body is in. The retry planner is asked (through a
/// `retryDelay` closure) only when the body allows another attempt.
struct ExchangeResendState {
    /// The retry state of a request the planner may send more than once.
    private(set) var retry: RetryRun?
    /// A copy of a body that may be sent again (retried, replayed after a 401).
    private(set) var copy: RequestReplayBuffer?
    /// The request has no body (another attempt can always send it).
    private let bodyless: Bool
    /// A step replayed the request already (after a 401): at most once per request.
    private(set) var replayedByStep = false
    /// Why the last retried attempt failed: the answer if its body cannot go again after all.
    private var lastFailure: GatewayError?
    /// A stale pooled connection may still send the request once more
    /// (``GatewayError/staleConnection``): it has no body and may be repeated.
    private var staleResendLeft = false

    /// A request that goes once.
    init() {
        bodyless = true
    }

    /// `retry` from the planner's plan; `stepReplayLimit` the largest body a
    /// step may replay (nil: none). A body that may be sent again and may fit
    /// is copied as it goes.
    init(retry: RetryRun?, stepReplayLimit: Int?, declaredLength: Int?, bodyless: Bool, repeatable: Bool = false) {
        self.retry = retry
        self.bodyless = bodyless
        staleResendLeft = bodyless && repeatable
        guard !bodyless else { return }
        var limit = retry?.bodyLimit
        if let stepReplayLimit { limit = max(limit ?? 0, stepReplayLimit) }
        if let limit, (declaredLength ?? 0) <= limit {
            copy = RequestReplayBuffer(limit: limit, declaredLength: declaredLength)
        }
    }

    /// A later attempt may follow the first (a retry, a replay).
    var mayAttemptAgain: Bool { retry != nil || copy != nil }

    /// The steps may ask to replay the request after a response: no step did
    /// yet, and the body (if any) is or will surely be all in its copy.
    var stepsMayReplay: Bool {
        !replayedByStep && canResend(within: replayLimit, certain: true)
    }

    /// The largest body a retry sends again (`buffer_limit`).
    var retryLimit: Int { retry?.bodyLimit ?? 0 }
    /// The largest body a step's replay sends again (the copy's limit).
    var replayLimit: Int { copy?.limit ?? 0 }

    /// A part of the client's body; false when no copy is kept (nothing waits for it).
    mutating func bodyPart(_ part: ByteBuffer) -> Bool {
        guard copy != nil else { return false }
        copy?.append(part)
        return true
    }

    /// The client's body ended; false when no copy is kept.
    mutating func bodyEnded() -> Bool {
        guard copy != nil else { return false }
        copy?.end()
        return true
    }

    /// After a response head the steps saw (`replayAsked`: one asked to replay
    /// the request): the next attempt, or nil when the response goes to the client.
    mutating func next(afterHeadWith replayAsked: Bool, retryDelay: (inout RetryRun) -> Duration?) -> ExchangeStateMachine.Next? {
        if replayAsked {
            assert(stepsMayReplay, "a step replayed a request it was told it may not")
            replayedByStep = true
            return .replay
        }
        if let limit = retry?.bodyLimit, canResend(within: limit, certain: true), let delay = askPlanner(retryDelay) {
            return .after(delay)
        }
        copy = nil  // sent once more no more
        return nil
    }

    enum Retry: Equatable {
        case after(Duration)
        /// Undecided until the body is all in (or outgrows its copy).
        case awaitBody
        /// The failure is the answer.
        case no
    }

    /// After an attempt failed on a stale pooled connection: whether the
    /// request goes again at once on another, outside the retry policy and its
    /// budget (once per request; only a bodiless request that may be repeated).
    mutating func resendsAfterStale(_ error: GatewayError) -> Bool {
        guard error.staleConnection, staleResendLeft else { return false }
        staleResendLeft = false
        return true
    }

    /// After an attempt failed before its response head.
    mutating func retry(after error: GatewayError, retryDelay: (GatewayError, inout RetryRun) -> Duration?) -> Retry {
        guard let limit = retry?.bodyLimit, canResend(within: limit, certain: false) else { return .no }
        guard canResend(within: limit, certain: true) else { return .awaitBody }
        guard let delay = askPlanner({ retryDelay(error, &$0) }) else { return .no }
        lastFailure = error
        return .after(delay)
    }

    /// What the next attempt sends, allowing bodies up to `limit` bytes.
    enum Restart: Equatable {
        case send(ExchangeStateMachine.AttemptRequest)
        /// The body is still coming.
        case awaitBody
        /// The body cannot go again (it outgrew the limit): this is the answer.
        case unavailable
    }

    func restart(within limit: Int) -> Restart {
        guard let copy else { return .send(.routed) }
        switch copy.availability(within: limit) {
        case .ready(let body): return .send(.routedWithBody(body))
        case .coming, .unknown: return .awaitBody
        case .unavailable: return .unavailable
        }
    }

    /// The answer when the body cannot go again after all (``Restart/unavailable``).
    var unavailableError: GatewayError { lastFailure ?? Self.bodyTooLarge }

    private static let bodyTooLarge = GatewayError(.bodyTooLarge, "the request body is over the limit for sending it again")

    /// Whether another attempt allowing bodies up to `limit` bytes can send
    /// the request: it has no body, or its copy is (`certain`: or surely will
    /// be; otherwise: or may still be) all of it within `limit`.
    private func canResend(within limit: Int, certain: Bool) -> Bool {
        guard let copy else { return bodyless }
        let availability = copy.availability(within: limit)
        return certain ? availability.isCertain : availability.isPossible
    }

    /// The planner's verdict on the retry state: the wait before the next attempt, or nil.
    private mutating func askPlanner(_ retryDelay: (inout RetryRun) -> Duration?) -> Duration? {
        guard var run = retry else { return nil }
        let delay = retryDelay(&run)
        retry = run
        return delay
    }
}
