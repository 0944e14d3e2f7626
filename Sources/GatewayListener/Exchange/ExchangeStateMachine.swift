import GatewayCore

/// The progress of one ``Exchange``, without I/O: which phase it is in (the
/// attempt steps, a wait, an attempt, a turned-down response being dropped, a
/// backoff, a wait for the body to send again, the response), what it has
/// counted, and what each event makes of it. The exchange feeds it events and
/// performs the actions it returns; the futures, timers and writers those
/// actions concern stay in the exchange (async-http-client's
/// `RequestBag.StateMachine` is the model).
///
/// The phases, in the order an exchange meets them:
/// `preparing(step:)` (the route's attempt steps, from `step` on) →
/// `waiting(step:)` (a step's future) → `attempting` (no response head yet) →
/// `responding` (the head went to the client), or a detour back to
/// `preparing(step: 0)`: `discarding` (a retryable or replayed response's
/// body), `backingOff`, `awaitingBody` / `awaitingBodyToRetry` (a body that
/// must be whole before it goes again). `finished` ends every path.
struct ExchangeStateMachine {
    /// When the attempt after a turned-down response goes.
    enum Next: Equatable {
        /// After the retry planner's backoff.
        case after(Duration)
        /// Once a step's wait (a token refresh after a 401) is over.
        case replay
    }

    enum Phase {
        case preparing(step: Int)
        case waiting(step: Int)
        case attempting
        case discarding(then: Next)
        case backingOff
        /// The next attempt sends the body again (bodies up to `within` bytes) once it is all in.
        case awaitingBody(within: Int)
        /// An attempt failed while a body that may outgrow its copy was still
        /// coming: whether to retry is decided once it is in.
        case awaitingBodyToRetry(after: GatewayError)
        /// The head went to the client; `bodyless`: no body goes after it (HEAD, 204, 304).
        case responding(bodyless: Bool)
        case finished
    }

    private(set) var phase = Phase.preparing(step: 0)
    /// The status the client got (or is getting).
    private(set) var status: Int?
    /// Request body bytes the client sent; response body bytes it was sent.
    private(set) var bytesIn = 0
    private(set) var bytesOut = 0
    /// A step replayed the request already (after a 401): at most once per request.
    private(set) var replayedByStep = false
    /// `100 Continue` went out.
    private(set) var continueSent = false
    /// Response parts written since the last flush.
    private var unflushed = false

    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// The upstream's response is on its way to the client (with a body).
    var isForwardingBody: Bool {
        if case .responding(bodyless: false) = phase { return true }
        return false
    }

    var isAttempting: Bool {
        if case .attempting = phase { return true }
        return false
    }

    // MARK: Steps and attempts

    /// Every step again, from the first (a new attempt).
    mutating func restartSteps() {
        phase = .preparing(step: 0)
    }

    /// The step to run next, while preparing.
    var currentStep: Int? {
        if case .preparing(let step) = phase { return step }
        return nil
    }

    mutating func stepProceeded() {
        guard case .preparing(let step) = phase else { return }
        phase = .preparing(step: step + 1)
    }

    mutating func stepWaits() {
        guard case .preparing(let step) = phase else { return }
        phase = .waiting(step: step)
    }

    /// A step's wait is over; false when the exchange stopped waiting meanwhile
    /// (abandoned, finished): the outcome is dropped. `repeatStep`: the same
    /// step runs again (it waited for a condition, not for its result).
    mutating func waitEnded(repeatStep: Bool) -> Bool {
        guard case .waiting(let step) = phase else { return false }
        phase = .preparing(step: repeatStep ? step : step + 1)
        return true
    }

    /// A replay's wait (after a 401) is over: the attempts restart. False when no longer waiting.
    mutating func replayWaitEnded() -> Bool {
        guard case .waiting = phase else { return false }
        phase = .preparing(step: 0)
        return true
    }

    mutating func attemptStarted() {
        phase = .attempting
    }

    /// The attempt in flight is given up (a timeout, the client gone): callbacks
    /// it causes find none in flight. Returns what was pending, for the exchange to withdraw.
    mutating func abandon() -> Phase {
        let current = phase
        if !isFinished { phase = .preparing(step: 0) }
        return current
    }

    /// A step or the planner turned the response down: `.discarding` if its
    /// body must be read to the end (the request all went), else the attempt
    /// is given up at once (its connection cannot be reused) and the next starts.
    enum TurnDown: Equatable {
        case discard
        case abandonAndStartNext(Next)
    }

    mutating func responseTurnedDown(next: Next, requestSent: Bool, byStep: Bool) -> TurnDown {
        if byStep { replayedByStep = true }
        guard requestSent else { return .abandonAndStartNext(next) }
        phase = .discarding(then: next)
        return .discard
    }

    /// Waiting for a step's replay wait (the 401's token refresh) before the next attempt.
    mutating func awaitReplay() {
        phase = .waiting(step: 0)
    }

    mutating func backingOff() {
        phase = .backingOff
    }

    /// The backoff is over; false when the exchange moved on meanwhile.
    mutating func backoffEnded() -> Bool {
        guard case .backingOff = phase else { return false }
        return true
    }

    mutating func awaitBody(within limit: Int) {
        phase = .awaitingBody(within: limit)
    }

    mutating func awaitBodyToRetry(after error: GatewayError) {
        phase = .awaitingBodyToRetry(after: error)
    }

    /// What a part or the end of the client's body means for an attempt that waits for it.
    enum BodyArrival {
        case restartAttempts(within: Int)
        case decideRetry(after: GatewayError)
        case none
    }

    func bodyArrived() -> BodyArrival {
        switch phase {
        case .awaitingBody(let limit): .restartAttempts(within: limit)
        case .awaitingBodyToRetry(let error): .decideRetry(after: error)
        default: .none
        }
    }

    // MARK: Request body

    mutating func requestBodyReceived(_ count: Int) {
        bytesIn += count
    }

    /// Whether to write `100 Continue` now: once, if the client asked and no response started.
    mutating func continueNeeded(expected: Bool, responseStarted: Bool) -> Bool {
        guard !continueSent, expected, !responseStarted else { return false }
        continueSent = true
        return true
    }

    // MARK: Response

    /// The response head goes to the client. `bodyless`: its framing sends no body.
    mutating func responding(status: Int, bodyless: Bool) {
        phase = .responding(bodyless: bodyless)
        self.status = status
        // Out at the end of the read that carried it: a slow first body part does not hold the status back.
        unflushed = true
    }

    /// A part of the response body; true: write it to the client.
    mutating func responseBodyPart(_ count: Int) -> Bool {
        guard case .responding(bodyless: false) = phase else { return false }
        bytesOut += count
        unflushed = true
        return true
    }

    /// True when parts were written since the last flush (they are flushed now).
    mutating func takeUnflushed() -> Bool {
        defer { unflushed = false }
        return unflushed
    }

    enum End: Equatable {
        /// A turned-down response's body is over: the next attempt.
        case startNext(Next)
        /// The response is over: log, finish the observers, end the client's response.
        case finish
        case ignore
    }

    mutating func responseEnded() -> End {
        switch phase {
        case .discarding(let next):
            return .startNext(next)
        case .responding:
            phase = .finished
            return .finish
        default:
            return .ignore
        }
    }

    enum UpstreamFailure: Equatable {
        /// Before the head: retried, or the client's answer.
        case attemptFailed
        /// A turned-down response did not end cleanly: the next attempt goes anyway.
        case startNext(Next)
        /// Mid-response: the exchange fails.
        case fail
        case ignore
    }

    func upstreamFailed() -> UpstreamFailure {
        switch phase {
        case .attempting: .attemptFailed
        case .discarding(let next): .startNext(next)
        case .responding: .fail
        default: .ignore
        }
    }

    /// The upstream answered the handshake with 101; false when no attempt was in flight.
    mutating func upgraded(status: Int) -> Bool {
        guard isAttempting else { return false }
        phase = .finished
        self.status = status
        return true
    }

    /// Whether the upstream's reads wait: never while a turned-down body is dropped.
    func pausesUpstream(clientWritable: Bool) -> Bool {
        if case .discarding = phase { return false }
        return !clientWritable
    }

    /// A response of the gateway's own (a step's, an error) goes out with `status`.
    mutating func answeredLocally(status: Int) {
        phase = .finished
        self.status = status
    }

    /// The exchange ends (failed, cancelled); false when it had already.
    mutating func finish() -> Bool {
        guard !isFinished else { return false }
        phase = .finished
        return true
    }
}
