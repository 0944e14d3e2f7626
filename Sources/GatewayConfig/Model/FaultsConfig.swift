/// `upstreams[i].faults`: responses the gateway makes up on purpose, so that an
/// app (or the gateway's own retry and refresh) can be tried against an API's
/// bad days. Absent (nil) costs nothing; `enabled: false` keeps the rules but
/// builds no phase, as if absent.
public struct FaultsConfig: Sendable, Equatable {
    /// `enabled`: false keeps the rules written but injects nothing.
    public var enabled: Bool
    /// `seed`: the same seed gives the same sequence of faults for the same
    /// sequence of requests; nil draws one when the config loads.
    public var seed: UInt64?
    /// `rules`: tried in order; the first whose endpoint matches and that fires wins.
    public var rules: [FaultRule]

    public init(enabled: Bool = true, seed: UInt64? = nil, rules: [FaultRule] = []) {
        self.enabled = enabled
        self.seed = seed
        self.rules = rules
    }
}

/// One `faults.rules` entry.
public struct FaultRule: Sendable, Equatable {
    /// `endpoint`: `[METHOD ]/path/{param}`; nil matches every request of the upstream.
    public var endpoint: EndpointTemplate?
    /// `rate`: the chance (0 to 1) that a matching request gets the fault.
    public var rate: Double
    /// `every`: every n-th matching request gets the fault (then `rate` is not drawn).
    public var every: Int?
    /// `toward`: who sees the fault.
    public var toward: FaultTarget
    public var action: FaultAction

    public init(endpoint: EndpointTemplate? = nil, rate: Double = 1, every: Int? = nil, toward: FaultTarget = .app, action: FaultAction) {
        self.endpoint = endpoint
        self.rate = rate
        self.every = every
        self.toward = toward
        self.action = action
    }

    /// The metric label of the fault: `error`, `latency`, `reset` or `slow_body`.
    public var kind: String { action.kind }

    /// Where the fault acts on an exchange.
    public var stage: FaultStage {
        switch action {
        case .slowBody, .resetMidBody: .responseBody
        case .error, .latency, .reset: toward == .policies ? .upstream : .request
        }
    }
}

/// Where a fault acts: before the attempt, toward the app (`request`: an
/// error, a latency, a reset before any response byte); in place of the
/// upstream, toward the gateway's policies (`upstream`); or on the response
/// body on its way to the app (`responseBody`: a slow body, a reset in its middle).
public enum FaultStage: Sendable, Equatable {
    case request, upstream, responseBody
}

/// `toward`: `app` (the client sees the fault; the gateway's policies do not)
/// or `policies` (the fault stands in for the upstream's answer on one attempt,
/// so retries, rate-limit pauses and token refresh react to it as to the upstream's).
public enum FaultTarget: String, Sendable, Equatable {
    case app, policies
}

/// What a fault does.
public enum FaultAction: Sendable, Equatable {
    /// `error`: a response of this status (429 with `Retry-After`, 5xx, a 401), with optional headers and body.
    case error(FaultResponse)
    /// `latency`: the request waits this long (a duration drawn in the range) before it goes on.
    case latency(min: Duration, max: Duration)
    /// `reset: true`: the attempt fails as a connection reset before any response byte.
    case reset
    /// `reset: {after: 4KiB}`: the response starts, and the client's connection
    /// is reset after this many body bytes (fewer when the body is not longer:
    /// the client never gets it whole).
    case resetMidBody(afterBytes: Int)
    /// `slow_body: {bytes_per_second: 2KiB}`: the response's head goes at once,
    /// its body trickles to the client at this rate.
    case slowBody(bytesPerSecond: Int)

    public var kind: String {
        switch self {
        case .error: "error"
        case .latency: "latency"
        case .reset, .resetMidBody: "reset"
        case .slowBody: "slow_body"
        }
    }
}

/// The response of an `error` fault.
public struct FaultResponse: Sendable, Equatable {
    public var status: Int
    /// `retry_after`: sent as `Retry-After` in whole seconds.
    public var retryAfter: Duration?
    public var headers: [MockHeader]
    /// nil: a small JSON body naming the fault.
    public var body: String?

    public init(status: Int, retryAfter: Duration? = nil, headers: [MockHeader] = [], body: String? = nil) {
        self.status = status
        self.retryAfter = retryAfter
        self.headers = headers
        self.body = body
    }
}
