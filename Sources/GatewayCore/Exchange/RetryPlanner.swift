public import NIOHTTP1

/// The retry rules of one upstream for the exchange: whether a request may
/// be sent more than once, and after each failed attempt whether (and after how
/// long) to send it again. Built once per config load; the state of one request
/// is the value ``RetryRun``, kept by the exchange (nothing allocated per request).
public protocol RetryPlanner: Sendable {
    /// Called once per client request, before its first attempt (it counts the
    /// request in the retry budget).
    func begin(_ request: ProxyRequest) -> RetryPlan

    /// After an attempt failed before its response head: the wait before the
    /// next attempt, or nil to give the failure to the client.
    func retry(after error: GatewayError, run: inout RetryRun, context: RequestContext) -> Duration?

    /// After a response head: the wait before the next attempt (the response is
    /// then discarded), or nil to give it to the client.
    func retry(afterStatus status: HTTPResponseStatus, headers: HTTPHeaders, run: inout RetryRun, context: RequestContext) -> Duration?

    /// Whether a response of this status may be retried at all: if not, the
    /// exchange does not make the response's fields `HTTPHeaders` to ask.
    func considers(status: HTTPResponseStatus) -> Bool
}

extension RetryPlanner {
    public func considers(status: HTTPResponseStatus) -> Bool { true }
}

/// How a request's attempts go.
public enum RetryPlan {
    /// One attempt: the method is not safe to repeat, or retries are off.
    case single
    /// Up to `run.maxAttempts` attempts; a body is sent again from the
    /// exchange's copy of it, if it is at most `run.bodyLimit` bytes.
    case retrying(RetryRun)
}

/// One request's retry state on the event loop.
public struct RetryRun: Sendable {
    /// Attempts made so far (1 during the first).
    public var attempts: Int
    public let maxAttempts: Int
    /// When the whole request gives up (`retry.deadline`); kept by value
    /// (``KeptInstant``): the run is copied as the exchange goes.
    @KeptInstant public private(set) var deadline: ContinuousClock.Instant?
    /// The limit on one attempt until its response head (`retry.per_try_timeout`).
    public let perTryTimeout: Duration?
    /// The largest request body a retry sends again (`retry.buffer_limit`): the
    /// exchange keeps a copy of the body up to this size as it forwards it; a
    /// larger body goes once. 0: only a request without a body is retried.
    public let bodyLimit: Int

    public init(maxAttempts: Int, deadline: ContinuousClock.Instant?, perTryTimeout: Duration?, bodyLimit: Int = 0) {
        self.attempts = 1
        self.maxAttempts = maxAttempts
        self.deadline = deadline
        self.perTryTimeout = perTryTimeout
        self.bodyLimit = bodyLimit
    }
}
