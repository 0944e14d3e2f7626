import GatewayConfig
import NIOCore

/// The client connection's timers as one pure value: which deadlines are
/// live, and what to do when the connection's single timer fires. No I/O, no
/// clock: every event carries `now`.
///
/// - **head** (`header_timeout`): from the first byte of a request head until
///   the head is complete (slowloris);
/// - **idle** (`idle_timeout`): a connection with no request in flight and no
///   byte received is closed quietly;
/// - **body** (`body_timeout`): while a request body is being received, the
///   longest pause between two reads;
/// - **send** (`send_timeout`): while the client socket is not writable (the
///   client does not read its response), how long that may last.
///
/// One timer serves all four: it is due no later than the earliest deadline and
/// is not cancelled when a deadline goes away; when it fires it looks at what
/// is left, so a keep-alive request costs no timer scheduled and cancelled.
struct ClientTimeoutStateMachine {
    struct Limits {
        var header: TimeAmount
        var idle: TimeAmount
        var body: TimeAmount
        var send: TimeAmount
    }

    enum Expiry: Equatable {
        case head, body, send
    }

    enum Action: Equatable {
        case none
        /// Make sure the timer fires no later than this.
        case armTimer(NIODeadline)
        /// A limit passed: the connection answers (head, body: 408) or closes (send).
        case expired(Expiry)
        /// Idle for `idle_timeout`: close without a word.
        case closeIdle
    }

    let limits: Limits
    private(set) var awaitingHead = true
    private var inFlight = 0
    private var headDeadline: NIODeadline?
    private var idleDeadline: NIODeadline?
    private var bodyDeadline: NIODeadline?
    private var sendDeadline: NIODeadline?
    /// A body is being read but the gateway holds reads (the upstream is slow to take it): not the client's pause.
    private var bodyPaused = false

    init(limits: Limits) {
        self.limits = limits
    }

    /// The connection became active (or the handler was added to an active one).
    mutating func connected(now: NIODeadline) -> Action {
        armIdle(now: now)
    }

    /// Bytes arrived from the client.
    mutating func bytesRead(now: NIODeadline) -> Action {
        if awaitingHead {
            guard headDeadline == nil else { return .none }
            idleDeadline = nil
            let deadline = now + limits.header
            headDeadline = deadline
            return .armTimer(deadline)
        }
        guard bodyDeadline != nil, !bodyPaused else { return .none }
        let deadline = now + limits.body
        bodyDeadline = deadline
        // The timer due for the previous body deadline fires first and re-arms.
        return .none
    }

    /// A complete request head was decoded; `bodyFollows` when a request body is to be read.
    mutating func headReceived(bodyFollows: Bool, now: NIODeadline) -> Action {
        awaitingHead = false
        inFlight += 1
        headDeadline = nil
        idleDeadline = nil
        guard bodyFollows else { return .none }
        let deadline = now + limits.body
        bodyDeadline = deadline
        return .armTimer(deadline)
    }

    /// The request body was read to its end.
    mutating func requestEnded() {
        bodyDeadline = nil
        bodyPaused = false
    }

    /// The gateway holds reads (back-pressure) or lets them go again: while
    /// held, a silent client is not timed out for its body.
    mutating func readsHeld(_ held: Bool, now: NIODeadline) -> Action {
        guard bodyDeadline != nil, held != bodyPaused else { return .none }
        bodyPaused = held
        guard !held else { return .none }
        let deadline = now + limits.body
        bodyDeadline = deadline
        return .armTimer(deadline)
    }

    /// The response to a request was fully written: wait for the next head.
    mutating func exchangeFinished(now: NIODeadline) -> Action {
        inFlight = max(0, inFlight - 1)
        bodyDeadline = nil
        bodyPaused = false
        guard inFlight == 0 else { return .none }
        awaitingHead = true
        return armIdle(now: now)
    }

    /// The client socket's writability changed.
    mutating func writabilityChanged(writable: Bool, now: NIODeadline) -> Action {
        guard !writable else {
            sendDeadline = nil
            return .none
        }
        guard sendDeadline == nil else { return .none }
        let deadline = now + limits.send
        sendDeadline = deadline
        return .armTimer(deadline)
    }

    /// The timer fired: what expired, or when to look again.
    mutating func timerFired(now: NIODeadline) -> Action {
        if let deadline = sendDeadline, now >= deadline {
            sendDeadline = nil
            return .expired(.send)
        }
        if awaitingHead, let deadline = headDeadline, now >= deadline {
            headDeadline = nil
            return .expired(.head)
        }
        if !bodyPaused, let deadline = bodyDeadline, now >= deadline {
            bodyDeadline = nil
            return .expired(.body)
        }
        if awaitingHead, headDeadline == nil, let deadline = idleDeadline, now >= deadline {
            idleDeadline = nil
            return .closeIdle
        }
        return nextDeadline.map(Action.armTimer) ?? .none
    }

    /// The earliest live deadline.
    var nextDeadline: NIODeadline? {
        var next: NIODeadline?
        for deadline in [sendDeadline, awaitingHead ? headDeadline : nil, bodyPaused ? nil : bodyDeadline, awaitingHead ? idleDeadline : nil] {
            if let deadline, deadline < (next ?? .distantFuture) { next = deadline }
        }
        return next
    }

    /// The connection closed or left HTTP (a tunnel): nothing is due any more.
    mutating func stopped() {
        headDeadline = nil
        idleDeadline = nil
        bodyDeadline = nil
        bodyPaused = false
        sendDeadline = nil
    }

    private mutating func armIdle(now: NIODeadline) -> Action {
        guard idleDeadline == nil else { return .none }
        let deadline = now + limits.idle
        idleDeadline = deadline
        // Due within a header timeout: the next request's first byte (usually soon)
        // then finds a timer early enough for its head and schedules none.
        return .armTimer(min(deadline, now + limits.header))
    }
}

extension ClientTimeoutStateMachine.Limits {
    init(_ limits: ListenerLimits) {
        self.init(
            header: TimeAmount(limits.headerTimeout), idle: TimeAmount(limits.idleTimeout),
            body: TimeAmount(limits.bodyTimeout), send: TimeAmount(limits.sendTimeout)
        )
    }
}
